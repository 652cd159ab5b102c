package listen

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
)

// intake posts n notifications for the session's subscription straight to its receiver,
// signed as the service signs them, from workers connections at once, and returns the time
// from the first request to the last line on stdout. Every request must be answered 204.
func intake(tb testing.TB, s *run, n, workers int, firstID int64) time.Duration {
	tb.Helper()
	sub := s.subs[0]
	type msg struct {
		body []byte
		h    http.Header
	}
	// Signed beforehand: the clock runs for listen, not for the generator.
	msgs := make([]msg, n)
	now := time.Now()
	for i := range msgs {
		b, h := signed(tb, sub, sub.SigningSecret, firstID+int64(i), point{float64(i%180) - 89.5, float64(i%360) - 179.5}, now)
		msgs[i] = msg{b, h}
	}
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: waitTimeout}
	already := len(s.out.Lines())

	var next, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				req, _ := http.NewRequest("POST", s.url, bytes.NewReader(msgs[i].body))
				req.Header = msgs[i].h
				resp, err := hc.Do(req)
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode != http.StatusNoContent {
						err = &statusError{resp.StatusCode}
					}
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		tb.Fatalf("%d of %d notifications refused or lost; the first: %v", f, n, firstErr.Load())
	}
	s.out.waitCount(tb, already+n)
	return time.Since(start)
}

type statusError struct{ status int }

func (e *statusError) Error() string { return "status " + strconv.Itoa(e.status) }

// TestListenIntake checks that a burst of notifications from many connections at once is
// taken whole: each shown exactly once. The rate is measured by BenchmarkListenIntake, not
// asserted here: a busy machine would make such a check flaky.
func TestListenIntake(t *testing.T) {
	const n = 5000
	_, c, _ := loggedIn(t)
	s := start(t, c, func(o *ListenOptions) { o.Format = FormatJSON })
	const firstID = 1_000_000
	intake(t, s, n, 32, firstID)
	sent := n
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, sent)
	for _, line := range s.out.Lines() {
		var body api.NotificationBody
		if err := json.Unmarshal([]byte(line), &body); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		i := body.ID - firstID
		if i < 0 || i >= int64(sent) || seen[i] {
			t.Fatalf("notification %d shown twice or never sent", body.ID)
		}
		seen[i] = true
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("notification %d never shown", firstID+i)
		}
	}
	if want := "Received " + strconv.Itoa(sent) + " notifications (0 duplicates dropped, 0 requests refused)."; !strings.Contains(s.errOut.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, s.errOut)
	}
}

// BenchmarkListenIntake reports listen's intake in notifications/s; -benchtime 20000x posts
// 20,000 notifications.
func BenchmarkListenIntake(b *testing.B) {
	for _, format := range []string{FormatPretty, FormatJSON} {
		b.Run(format, func(b *testing.B) {
			_, c, _ := loggedIn(b)
			s := start(b, c, func(o *ListenOptions) { o.Format = format })
			b.ResetTimer()
			elapsed := intake(b, s, b.N, 32, 1_000_000)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "notifications/s")
			if err := s.stop(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
