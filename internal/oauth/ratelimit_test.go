package oauth

import (
	"maps"
	"slices"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

var limitT0 = time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)

// testLimits: 3 failures per username, then one per minute; 5 per address, then one per 10 s.
var testLimits = LoginLimits{UserBurst: 3, UserEvery: time.Minute, AddrBurst: 5, AddrEvery: 10 * time.Second}

// checkWait asserts that wait is a positive whole number of seconds no longer than most
// (Retry-After is in seconds) when blocked, or zero when not.
func checkWait(t *testing.T, l *loginLimiter, user, addr string, now time.Time, blocked bool, most time.Duration) {
	t.Helper()
	w := l.wait(user, addr, now)
	switch {
	case !blocked && w != 0:
		t.Errorf("wait(%q, %q, t0+%v) = %v, want 0", user, addr, now.Sub(limitT0), w)
	case blocked && (w <= 0 || w > most || w%time.Second != 0):
		t.Errorf("wait(%q, %q, t0+%v) = %v, want whole seconds in (0, %v]", user, addr, now.Sub(limitT0), w, most)
	}
}

func TestLoginLimiterBurstThenRefill(t *testing.T) {
	l := newLoginLimiter(testLimits)
	for i := range 3 {
		checkWait(t, l, "alice", "192.0.2.1", limitT0, false, 0)
		l.fail("alice", "192.0.2.1", limitT0.Add(time.Duration(i)*time.Millisecond))
	}
	// The burst is spent: a whole refill period to wait, rounded up to a second at most.
	checkWait(t, l, "alice", "192.0.2.1", limitT0, true, time.Minute+time.Second)
	if w := l.wait("alice", "192.0.2.1", limitT0); w < 59*time.Second {
		t.Errorf("wait right after the burst = %v, want about a minute", w)
	}
	// Half-way, half the wait.
	checkWait(t, l, "alice", "192.0.2.1", limitT0.Add(30*time.Second), true, 31*time.Second)
	// One period later, one more try, and only one.
	now := limitT0.Add(61 * time.Second)
	checkWait(t, l, "alice", "192.0.2.1", now, false, 0)
	l.fail("alice", "192.0.2.1", now)
	checkWait(t, l, "alice", "192.0.2.1", now, true, time.Minute+time.Second)
	// Long after, the whole burst is back.
	now = limitT0.Add(time.Hour)
	for range 3 {
		checkWait(t, l, "alice", "192.0.2.1", now, false, 0)
		l.fail("alice", "192.0.2.1", now)
	}
	checkWait(t, l, "alice", "192.0.2.1", now, true, time.Minute+time.Second)
}

func TestLoginLimiterUsernameIsCaseInsensitive(t *testing.T) {
	// Usernames are unique case-insensitively, so "Alice" and "alice" are one target.
	l := newLoginLimiter(testLimits)
	for i, u := range []string{"Alice", "ALICE", "alice"} {
		l.fail(u, "192.0.2."+string(rune('1'+i)), limitT0)
	}
	checkWait(t, l, "aLiCe", "198.51.100.1", limitT0, true, time.Minute+time.Second)
	checkWait(t, l, "bob", "198.51.100.1", limitT0, false, 0)
}

func TestLoginLimiterSucceedForgivesUserNotAddress(t *testing.T) {
	l := newLoginLimiter(testLimits)
	for range 5 {
		l.fail("alice", "192.0.2.1", limitT0)
	}
	checkWait(t, l, "alice", "198.51.100.1", limitT0, true, time.Minute+time.Second) // the user is blocked
	checkWait(t, l, "bob", "192.0.2.1", limitT0, true, 11*time.Second)               // and so is the address

	l.succeed("ALICE")
	checkWait(t, l, "alice", "198.51.100.1", limitT0, false, 0)
	// The address guessed five times; one right password for one user does not clear it.
	checkWait(t, l, "bob", "192.0.2.1", limitT0, true, 11*time.Second)
	checkWait(t, l, "alice", "192.0.2.1", limitT0, true, 11*time.Second)
}

func TestLoginLimiterPerAddress(t *testing.T) {
	// One address trying a different username each time is stopped by the address limit.
	l := newLoginLimiter(testLimits)
	for _, u := range []string{"u0", "u1", "u2", "u3", "u4"} {
		checkWait(t, l, u, "192.0.2.1", limitT0, false, 0)
		l.fail(u, "192.0.2.1", limitT0)
	}
	checkWait(t, l, "u5", "192.0.2.1", limitT0, true, 11*time.Second)
	checkWait(t, l, "u5", "192.0.2.2", limitT0, false, 0) // another address is not affected
	checkWait(t, l, "u0", "192.0.2.2", limitT0, false, 0) // nor the users, who failed once each
	checkWait(t, l, "u5", "192.0.2.1", limitT0.Add(10*time.Second), false, 0)
}

func TestLoginLimiterDefaults(t *testing.T) {
	// Zero limits must mean the defaults, not "unlimited".
	l := newLoginLimiter(LoginLimits{})
	for range 5 {
		l.fail("alice", "192.0.2.1", limitT0)
	}
	checkWait(t, l, "alice", "198.51.100.1", limitT0, true, 3*time.Minute+time.Second)
	for i := range 20 {
		l.fail("u"+string(rune('a'+i)), "192.0.2.9", limitT0)
	}
	checkWait(t, l, "zed", "192.0.2.9", limitT0, true, 45*time.Second+time.Second)
}

func TestLoginLimiterSweep(t *testing.T) {
	l := newLoginLimiter(testLimits)
	keys := func(m map[string]*rate.Limiter) []string { return slices.Sorted(maps.Keys(m)) }

	l.fail("alice", "192.0.2.1", limitT0)                   // sweeps (the first time), then counts
	l.fail("bob", "192.0.2.2", limitT0.Add(30*time.Second)) // too soon to sweep
	// 70 s on: alice's bucket and both addresses' have refilled; bob's has not.
	l.fail("carol", "192.0.2.3", limitT0.Add(70*time.Second))
	if got := keys(l.users); !slices.Equal(got, []string{"bob", "carol"}) {
		t.Errorf("users after sweep = %v, want [bob carol]", got)
	}
	if got := keys(l.addrs); !slices.Equal(got, []string{"192.0.2.3"}) {
		t.Errorf("addresses after sweep = %v, want [192.0.2.3]", got)
	}
	// A swept user starts again with a full bucket.
	checkWait(t, l, "alice", "192.0.2.1", limitT0.Add(70*time.Second), false, 0)

	// Sweeps run at most once a minute, so a burst of failures does not scan the maps each
	// time: bob has refilled by now but stays until the next sweep.
	l.fail("dave", "192.0.2.4", limitT0.Add(100*time.Second))
	if got := keys(l.users); !slices.Equal(got, []string{"bob", "carol", "dave"}) {
		t.Errorf("users = %v, want [bob carol dave] (no sweep within a minute)", got)
	}
	// Much later every bucket has refilled; the next failure leaves only its own.
	l.fail("erin", "192.0.2.5", limitT0.Add(time.Hour))
	if got := keys(l.users); !slices.Equal(got, []string{"erin"}) {
		t.Errorf("users an hour later = %v, want [erin]", got)
	}
	if got := keys(l.addrs); !slices.Equal(got, []string{"192.0.2.5"}) {
		t.Errorf("addresses an hour later = %v, want [192.0.2.5]", got)
	}
}
