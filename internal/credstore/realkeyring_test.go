package credstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// Tests against the real OS keyring through go-keyring. On Linux they need a D-Bus
// session with an unlocked Secret Service, e.g.
//
//	dbus-run-session -- sh -c 'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; VCS_TEST_KEYRING=required go test ./internal/credstore'
//
// With VCS_TEST_KEYRING=required they fail when the keyring is not usable;
// otherwise they skip.

// realStore returns a Store on the real keyring and a profile name no one else uses,
// whose items are deleted at the end of the test.
func realStore(t *testing.T) (*Store, *syncBuffer, string) {
	t.Helper()
	notice := &syncBuffer{}
	s := New(Options{Dir: t.TempDir(), Timeout: 10 * time.Second, Notice: notice})
	profile := fmt.Sprintf("test-%d-%d", os.Getpid(), time.Now().UnixNano())
	_, err := s.krGet(testCtx(t), itemUser(profile, "probe"))
	if err != nil && !errors.Is(err, errKeyringNotFound) {
		if os.Getenv("VCS_TEST_KEYRING") == "required" {
			t.Fatalf("VCS_TEST_KEYRING=required but the OS keyring is not usable: %v", err)
		}
		t.Skipf("no usable OS keyring (%v); run under dbus-run-session with an unlocked gnome-keyring and VCS_TEST_KEYRING=required to test it", err)
	}
	t.Cleanup(func() {
		ctx := testCtx(t)
		for _, k := range []string{KeyTokens, KeyClientSecret} {
			if err := s.Delete(ctx, profile, k); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return s, notice, profile
}

// assertInKeyring checks, bypassing the Store, what the keyring holds for user.
func assertInKeyring(t *testing.T, user, want string) {
	t.Helper()
	got, err := keyring.Get(Service, user)
	if want == "" {
		if !errors.Is(err, keyring.ErrNotFound) {
			t.Fatalf("keyring item %s: err = %v, want ErrNotFound", user, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("keyring item %s: %v", user, err)
	}
	if got != want {
		t.Fatalf("keyring item %s holds %d bytes, not the expected %d", user, len(got), len(want))
	}
}

func assertKeyringUsed(t *testing.T, s *Store, notice *syncBuffer) {
	t.Helper()
	assertNoFile(t, s.dir)
	if notice.String() != "" || s.down.Load() != nil {
		t.Fatalf("the Store fell back to the file: %q", notice.String())
	}
}

func TestRealKeyringRoundTrip(t *testing.T) {
	s, notice, p := realStore(t)
	ctx := testCtx(t)
	tokens := `{"access_token":"at-1","refresh_token":"rt-1","expiry":"2030-01-01T00:00:00Z"}`

	if _, err := s.Get(ctx, p, KeyTokens); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before Set: %v", err)
	}
	if err := s.Set(ctx, p, KeyTokens, tokens); err != nil {
		t.Fatal(err)
	}
	assertInKeyring(t, p+":"+KeyTokens, tokens)
	if got := mustGet(t, s, p, KeyTokens); got != tokens {
		t.Fatalf("Get = %q", got)
	}
	if err := s.Set(ctx, p, KeyClientSecret, "client-secret-1"); err != nil {
		t.Fatal(err)
	}

	rotated := strings.ReplaceAll(tokens, "-1", "-2")
	if err := s.Set(ctx, p, KeyTokens, rotated); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, p, KeyTokens); got != rotated {
		t.Fatalf("Get after overwrite = %q", got)
	}
	// A second Store (another process, in effect) reads the same thing.
	other := New(Options{Dir: t.TempDir(), Timeout: 10 * time.Second, Notice: notice})
	if got, err := other.Get(ctx, p, KeyTokens); err != nil || got != rotated {
		t.Fatalf("another Store reads %q, %v", got, err)
	}

	if err := s.Delete(ctx, p, KeyTokens); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, p, KeyTokens); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	assertInKeyring(t, p+":"+KeyTokens, "")
	if err := s.Delete(ctx, p, KeyTokens); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if got := mustGet(t, s, p, KeyClientSecret); got != "client-secret-1" {
		t.Fatalf("client secret = %q", got)
	}
	assertKeyringUsed(t, s, notice)
}

func TestRealKeyringLargeValue(t *testing.T) {
	s, notice, p := realStore(t)
	ctx := testCtx(t)
	big := bigValue(20 * 1024)
	if err := s.Set(ctx, p, KeyTokens, big); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, p, KeyTokens); got != big {
		t.Fatalf("read back %d bytes, want the same %d", len(got), len(big))
	}
	if defaultMaxItem() == 0 {
		assertInKeyring(t, p+":"+KeyTokens, big) // Secret Service: one item
	} else {
		assertInKeyring(t, p+":"+KeyTokens+"#1", big[defaultMaxItem():2*defaultMaxItem()])
	}
	if err := s.Set(ctx, p, KeyTokens, "short"); err != nil {
		t.Fatal(err)
	}
	assertInKeyring(t, p+":"+KeyTokens+"#0", "")
	if err := s.Delete(ctx, p, KeyTokens); err != nil {
		t.Fatal(err)
	}
	assertInKeyring(t, p+":"+KeyTokens, "")
	assertKeyringUsed(t, s, notice)
}

// TestRealKeyringChunked forces the Windows limit, so that chunking runs against
// the real keyring whatever the platform.
func TestRealKeyringChunked(t *testing.T) {
	s, notice, p := realStore(t)
	s.maxItem.Store(2560)
	ctx := testCtx(t)
	big := bigValue(20 * 1024) // 8 chunks
	if err := s.Set(ctx, p, KeyTokens, big); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		assertInKeyring(t, fmt.Sprintf("%s:%s#%d", p, KeyTokens, i), big[i*2560:(i+1)*2560])
	}
	assertInKeyring(t, fmt.Sprintf("%s:%s#8", p, KeyTokens), "")
	if got := mustGet(t, s, p, KeyTokens); got != big {
		t.Fatal("reassembled value differs")
	}
	mid := bigValue(3000) // 2 chunks: #2..#7 must go
	if err := s.Set(ctx, p, KeyTokens, mid); err != nil {
		t.Fatal(err)
	}
	assertInKeyring(t, fmt.Sprintf("%s:%s#2", p, KeyTokens), "")
	assertInKeyring(t, fmt.Sprintf("%s:%s#7", p, KeyTokens), "")
	if got := mustGet(t, s, p, KeyTokens); got != mid {
		t.Fatal("value differs after overwrite")
	}
	if err := s.Delete(ctx, p, KeyTokens); err != nil {
		t.Fatal(err)
	}
	assertInKeyring(t, p+":"+KeyTokens, "")
	assertInKeyring(t, fmt.Sprintf("%s:%s#0", p, KeyTokens), "")
	assertKeyringUsed(t, s, notice)
}

// TestRealBackendWithoutBusFallsBack runs the real go-keyring backend in a helper
// process whose DBUS_SESSION_BUS_ADDRESS points at no socket. It needs a separate
// process because godbus caches the session bus connection process-wide: once
// another test has connected, changing the variable has no effect.
func TestRealBackendWithoutBusFallsBack(t *testing.T) {
	switch runtime.GOOS {
	case "windows", "darwin":
		t.Skip("go-keyring uses D-Bus only on Linux and the BSDs")
	}
	dir := t.TempDir()
	cmd := helperCommand(t, "no-bus",
		"VCS_HELPER_DIR="+dir,
		"VCS_HELPER_VALUE="+secret,
		"DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(dir, "no-such-bus"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, stderr.String())
	}
	if string(out) != "same\n" {
		t.Fatalf("helper read back a different value: %q", out)
	}
	msg := stderr.String()
	if c := strings.Count(msg, "warning: OS keyring unavailable"); c != 1 {
		t.Fatalf("notice printed %d times; want once:\n%s", c, msg)
	}
	// The reason is the failed dial (go-keyring fails fast), not a timeout.
	if !strings.Contains(msg, filepath.Join(dir, FileName)) || !strings.Contains(msg, "no-such-bus: connect") {
		t.Errorf("notice should name the file and the reason:\n%s", msg)
	}
	if strings.Contains(msg, secret) {
		t.Fatal("the helper printed the secret")
	}
	d := readCredFile(t, dir)
	if d.Profiles["dev"][KeyTokens] != secret || d.Profiles["dev"][KeyClientSecret] != "cs" {
		t.Fatal("the file does not hold the secrets")
	}
	checkMode(t, filepath.Join(dir, FileName), 0o600)
}
