package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// BenchmarkGetVehicle compares GET /vehicle/{id} through the whole service (routing, bearer
// token check, SQLite read, JSON envelope, request log) with a bare net/http handler that
// writes the same bytes, over loopback with keep-alive connections, in one run. The ratio
// of the two is in docs/benchmarks.md.
func BenchmarkGetVehicle(b *testing.B) {
	// The log is formatted as in production, then discarded rather than kept in memory.
	env := servertest.New(b, servertest.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	token := env.DemoToken()
	first := env.Do("GET", "/vehicle/1", token, nil)
	if first.Status != 200 {
		b.Fatalf("GET /vehicle/1: %d %s", first.Status, first.Body)
	}
	body := first.Body
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		_, _ = w.Write(body)
	}))
	defer bare.Close()

	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	run := func(b *testing.B, url string) {
		b.SetParallelism(8)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			for pb.Next() {
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		})
	}
	b.Run("service", func(b *testing.B) { run(b, env.URL+"/vehicle/1") })
	b.Run("bare", func(b *testing.B) { run(b, bare.URL+"/vehicle/1") })
}
