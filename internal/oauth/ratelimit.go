package oauth

import (
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// LoginLimits bounds failed logins, per username and per client address. Each is a token
// bucket: Burst failures at once, then one more per Every.
type LoginLimits struct {
	UserBurst int
	UserEvery time.Duration
	AddrBurst int
	AddrEvery time.Duration
}

func (l LoginLimits) withDefaults() LoginLimits {
	if l.UserBurst == 0 {
		l.UserBurst, l.UserEvery = 5, 3*time.Minute
	}
	if l.AddrBurst == 0 {
		l.AddrBurst, l.AddrEvery = 20, 45*time.Second
	}
	return l
}

// loginLimiter counts failed logins. It lives in memory: a restart forgives, and each
// server of a shared deployment counts on its own, which bounds guessing well enough for
// passwords that bcrypt already makes slow to try.
type loginLimiter struct {
	limits LoginLimits
	mu     sync.Mutex
	users  map[string]*rate.Limiter
	addrs  map[string]*rate.Limiter
	swept  time.Time
}

func newLoginLimiter(l LoginLimits) *loginLimiter {
	return &loginLimiter{limits: l.withDefaults(), users: map[string]*rate.Limiter{}, addrs: map[string]*rate.Limiter{}}
}

// wait returns how long the username or address must wait before it may try again; 0 when
// it may try now.
func (l *loginLimiter) wait(username, addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(waitFor(l.users[strings.ToLower(username)], now), waitFor(l.addrs[addr], now))
}

func waitFor(lim *rate.Limiter, now time.Time) time.Duration {
	if lim == nil {
		return 0
	}
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	secs := (1 - tokens) / float64(lim.Limit())
	return time.Duration(math.Ceil(secs)) * time.Second
}

// fail records a failed login.
func (l *loginLimiter) fail(username, addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	take(l.users, strings.ToLower(username), l.limits.UserEvery, l.limits.UserBurst, now)
	take(l.addrs, addr, l.limits.AddrEvery, l.limits.AddrBurst, now)
}

func take(m map[string]*rate.Limiter, key string, every time.Duration, burst int, now time.Time) {
	lim := m[key]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(every), burst)
		m[key] = lim
	}
	lim.AllowN(now, 1)
}

// succeed forgives the username's failures: its owner has just proved who they are.
func (l *loginLimiter) succeed(username string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.users, strings.ToLower(username))
}

// sweep drops buckets that have refilled, so that the maps hold only recent offenders.
func (l *loginLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for _, m := range []map[string]*rate.Limiter{l.users, l.addrs} {
		for k, lim := range m {
			if lim.TokensAt(now) >= float64(lim.Burst()) {
				delete(m, k)
			}
		}
	}
}
