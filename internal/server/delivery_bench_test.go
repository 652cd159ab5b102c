package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// benchFleet is a service with vehicles, each with one CONTINUOUS waypoint subscription
// to one local receiver.
type benchFleet struct {
	env      *servertest.Env
	token    string
	vehicles []int64
	client   *http.Client
}

func newBenchFleet(b *testing.B, vehicles int, receiverURL string) *benchFleet {
	env := servertest.New(b, servertest.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	f := &benchFleet{env: env, token: env.DemoToken(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	for i := range vehicles {
		r := env.Do("POST", "/vehicle/", f.token, map[string]any{"label": fmt.Sprintf("bench %d", i)})
		var v api.Envelope[api.Vehicle]
		r.JSON(b, &v)
		f.vehicles = append(f.vehicles, v.Data.VehicleID)
		r = env.Do("POST", fmt.Sprintf("/vehicle/%d/eventSubscription/WAYPOINT/", v.Data.VehicleID), f.token,
			map[string]any{"minimumTime": 0, "postUrl": receiverURL, "notificationPeriod": "CONTINUOUS"})
		if r.Status != 200 {
			b.Fatalf("subscribe: %d %s", r.Status, r.Body)
		}
	}
	return f
}

// post records a data set with one waypoint whose latitude carries seq.
func (f *benchFleet) post(b *testing.B, vehicle int64, seq int) {
	now := api.NewDateTime(time.Now())
	body, _ := json.Marshal(map[string]any{"timestamp": now, "ignitionStatus": "RUNNING",
		"datum": []map[string]any{{"timestamp": now, "key": api.KeyWaypoint, "value": api.WaypointValue(seqLat(seq), -82.5)}}})
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/vehicle/%d/dataSet/", f.env.URL, vehicle), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Errorf("data set: %d", resp.StatusCode)
	}
}

// seqLat encodes a sequence number in a latitude (6 decimals survive the wire).
func seqLat(seq int) float64 { return float64(seq%1_000_000)/1e6 + 10 }

func latSeq(lat float64) int { return int((lat-10)*1e6 + 0.5) }

// BenchmarkDeliveryThroughput: vehicles post data sets as fast as they can; each waypoint
// is delivered to a local receiver. Reported: notifications delivered per second, and in
// the same run the ceiling — raw keep-alive POSTs of the same size from one Go process to
// the same kind of receiver, with the same concurrency.
func BenchmarkDeliveryThroughput(b *testing.B) {
	const vehicles, senders = 64, 32
	var got atomic.Int64
	done := make(chan struct{})
	var target atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if got.Add(1) == target.Load() {
			close(done)
		}
	}))
	defer recv.Close()
	f := newBenchFleet(b, vehicles, recv.URL)

	b.ResetTimer()
	target.Store(int64(b.N))
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range senders {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				f.post(b, f.vehicles[i%vehicles], i)
			}
		})
	}
	wg.Wait()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		b.Fatalf("delivered %d of %d", got.Load(), b.N)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	rate := float64(b.N) / elapsed.Seconds()

	// The ceiling, in the same run.
	var ceilingGot atomic.Int64
	ceil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		ceilingGot.Add(1)
	}))
	defer ceil.Close()
	body := bytes.Repeat([]byte("x"), 420) // about a notification's size
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	next.Store(0)
	start = time.Now()
	for range senders {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				resp, err := client.Post(ceil.URL, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	ceiling := float64(b.N) / time.Since(start).Seconds()
	b.ReportMetric(rate, "notifications/s")
	b.ReportMetric(ceiling, "ceiling-posts/s")
	b.ReportMetric(rate/ceiling, "ratio")
}

// BenchmarkDeliveryLatency: data sets arrive at a steady 1,000 per second; reported are the
// p50 and p99 of the time from sending the data set to the receiver getting its
// notification. Run with -benchtime=5000x for five seconds of load.
func BenchmarkDeliveryLatency(b *testing.B) {
	const vehicles, rate = 64, 1000
	var mu sync.Mutex
	sent := make(map[int]time.Time, b.N)
	var lat []time.Duration
	all := make(chan struct{})
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		var n api.NotificationBody
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			b.Error(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if t0, ok := sent[latSeq(n.RecordedWaypoint.Latitude)]; ok {
			lat = append(lat, arrived.Sub(t0))
			if len(lat) == b.N {
				close(all)
			}
		}
	}))
	defer recv.Close()
	f := newBenchFleet(b, vehicles, recv.URL)

	b.ResetTimer()
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	var wg sync.WaitGroup
	for i := range b.N {
		<-tick.C
		mu.Lock()
		sent[i] = time.Now()
		mu.Unlock()
		wg.Go(func() { f.post(b, f.vehicles[i%vehicles], i) })
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(time.Minute):
		b.Fatalf("only %d of %d notifications arrived", len(lat), b.N)
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
}
