package delivery

import (
	"net/http"
	"testing"
	"time"
)

func TestSchedules(t *testing.T) {
	for name, tc := range map[string]struct {
		p        Policy
		attempts int
		within   time.Duration
	}{
		"sandbox: about 5 tries within 10 minutes": {SandboxPolicy(), 5, 10 * time.Minute},
		"production: about 8 tries within 3 days":  {ProductionPolicy(), 8, 3 * 24 * time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.p.MaxAttempts() != tc.attempts {
				t.Errorf("%d attempts, want %d", tc.p.MaxAttempts(), tc.attempts)
			}
			// The longest the schedule can take, every delay at its jittered maximum.
			var worst time.Duration
			for _, d := range tc.p.Delays {
				worst += time.Duration(float64(d) * (1 + tc.p.Jitter))
			}
			if worst > tc.within {
				t.Errorf("the schedule can take %s, more than %s", worst, tc.within)
			}
		})
	}
}

func TestDelayJitterStaysInBounds(t *testing.T) {
	p := SandboxPolicy()
	for attempt := 1; attempt <= p.MaxAttempts()+2; attempt++ {
		base := p.Delays[min(attempt, len(p.Delays))-1]
		lo, hi := time.Duration(float64(base)*(1-p.Jitter)), time.Duration(float64(base)*(1+p.Jitter))
		spread := map[time.Duration]bool{}
		for range 200 {
			d := p.delay(attempt)
			if d < lo || d > hi {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d, lo, hi)
			}
			spread[d] = true
		}
		if len(spread) < 10 {
			t.Errorf("attempt %d: delays are not jittered (%d distinct values)", attempt, len(spread))
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":     0,
		"120":  2 * time.Minute,
		"-5":   0,
		"soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestResolveLocation(t *testing.T) {
	for _, tc := range []struct{ base, loc, want string }{
		{"https://a.example/hooks/1", "/hooks/2", "https://a.example/hooks/2"},
		{"https://a.example/hooks/1", "https://b.example/x", "https://b.example/x"},
		{"https://a.example/hooks/1", "2", "https://a.example/hooks/2"},
		{"https://a.example/hooks/1", "", ""},
		{"https://a.example/hooks/1", "ftp://b.example/x", ""},
		{"https://a.example/hooks/1", "javascript:alert(1)", ""},
	} {
		got, err := resolve(tc.base, tc.loc)
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("resolve(%q, %q) = %q, %v; want %q", tc.base, tc.loc, got, err, tc.want)
		}
	}
}
