package auth

// End-to-end test of `vcs login`, `vcs token` and `vcs logout` with the real OS keyring.
// On Linux it needs a D-Bus session with an unlocked Secret Service, as .ci/run sets up:
//
//	dbus-run-session -- sh -c 'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; VCS_TEST_KEYRING=required go test ./internal/cli/auth'
//
// Without one it skips, unless VCS_TEST_KEYRING=required, when it fails.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/credstore"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
	"github.com/connected-vehicle/vcs/internal/session"
)

// keyringCall runs a go-keyring call, which can hang on a stuck D-Bus, for at most 10 s.
func keyringCall(f func() (string, error)) (string, error) {
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-timer.C:
		return "", errors.New("no answer from the keyring within 10s")
	}
}

// keyringProfile returns a profile name that no one else uses, after checking that the
// OS keyring answers (skipping, or failing with VCS_TEST_KEYRING=required, when it does
// not). The profile's keyring items are deleted when the test ends: the keyring outlives
// the test process.
func keyringProfile(t *testing.T) string {
	t.Helper()
	profile := fmt.Sprintf("e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	_, err := keyringCall(func() (string, error) { return keyring.Get(credstore.Service, profile+":probe") })
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		if os.Getenv("VCS_TEST_KEYRING") == "required" {
			t.Fatalf("VCS_TEST_KEYRING=required but the OS keyring is not usable: %v", err)
		}
		t.Skipf("no usable OS keyring (%v); run under dbus-run-session with an unlocked gnome-keyring and VCS_TEST_KEYRING=required to test it", err)
	}
	t.Cleanup(func() {
		for _, k := range []string{credstore.KeyTokens, credstore.KeyClientSecret} {
			_, err := keyringCall(func() (string, error) { return "", keyring.Delete(credstore.Service, profile+":"+k) })
			if err != nil && !errors.Is(err, keyring.ErrNotFound) {
				t.Errorf("cleanup of keyring item %s:%s: %v", profile, k, err)
			}
		}
	})
	return profile
}

// keyringCLI is a CLI on the real credential store (keyring first), logged in to profile
// on env, with its configuration in dir. Two keyringCLIs on one dir are, in effect, two
// vcs processes of one user.
func keyringCLI(t *testing.T, env *servertest.Env, dir, profile string) *clitest.CLI {
	t.Helper()
	c := clitest.New(t, env)
	// Before the first use of the credential store, which reads it.
	c.F.Globals.InsecureStorage = false
	c.F.Globals.Profile = profile
	cfg, err := config.Load(dir, func(k string) string {
		switch k {
		case config.EnvBaseURL:
			return env.URL
		case config.EnvAuthURL:
			return env.Server.AuthURL()
		case config.EnvClientID:
			return server.DevClientID
		case config.EnvClientSecret:
			return server.DevClientSecret // for the revocation at logout
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	c.F.Config = func() (*config.Config, error) { return cfg, nil }
	c.ConfigDir = dir
	return c
}

func TestLoginTokenLogoutWithRealKeyring(t *testing.T) {
	profile := keyringProfile(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := servertest.New(t)
	dir := filepath.Join(t.TempDir(), "vcs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	item := profile + ":" + credstore.KeyTokens
	credFile := filepath.Join(dir, credstore.FileName)

	// echo "$TOKEN" | vcs login --with-token --profile <profile>
	c := keyringCLI(t, env, dir, profile)
	tok := env.DemoToken()
	c.Stdin.WriteString(tok + "\n")
	opts := loginOptions(c)
	opts.WithToken = true
	if err := loginRun(ctx, opts); err != nil {
		t.Fatalf("login: %v\n%s", err, c.Stderr)
	}
	if want := fmt.Sprintf("Logged in to %s as demo (account 1)\n", profile); !strings.Contains(c.Stderr.String(), want) {
		t.Errorf("login's stderr = %q, want %q", c.Stderr, want)
	}
	if strings.Contains(c.Stderr.String(), "keyring unavailable") {
		t.Fatalf("login fell back from the keyring: %s", c.Stderr)
	}

	// The token set is in the OS keyring...
	raw, err := keyringCall(func() (string, error) { return keyring.Get(credstore.Service, item) })
	if err != nil {
		t.Fatalf("keyring item %s: %v", item, err)
	}
	var ts session.TokenSet
	if err := json.Unmarshal([]byte(raw), &ts); err != nil {
		t.Fatalf("keyring item %s is not a token set: %v", item, err)
	}
	if ts.AccessToken != tok || ts.Username != server.DevUsername || ts.AccountID != 1 {
		t.Fatalf("the keyring holds a token set of %q (account %d), with the access token %t; want demo's, with the token given",
			ts.Username, ts.AccountID, ts.AccessToken == tok)
	}
	// ...and not in credentials.json.
	switch b, err := os.ReadFile(credFile); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		t.Fatal(err)
	case strings.Contains(string(b), tok) || strings.Contains(string(b), profile):
		t.Fatalf("%s holds the profile's tokens too", credFile)
	}

	// vcs token, in another process: it reads the keyring.
	c2 := keyringCLI(t, env, dir, profile)
	if err := tokenRun(ctx, &TokenOptions{IO: c2.IO, Session: c2.F.Session, Globals: c2.F.Globals}); err != nil {
		t.Fatalf("token: %v\n%s", err, c2.Stderr)
	}
	if got := c2.Stdout.String(); got != tok+"\n" {
		t.Fatalf("vcs token printed %q, want the stored token alone on a line", got)
	}
	if c2.Stderr.Len() != 0 {
		t.Errorf("vcs token wrote to stderr: %q", c2.Stderr)
	}

	// vcs logout, in a third: it revokes the tokens and deletes them from the keyring.
	c3 := keyringCLI(t, env, dir, profile)
	if err := logoutRun(ctx, &LogoutOptions{IO: c3.IO, Session: c3.F.Session}); err != nil {
		t.Fatalf("logout: %v\n%s", err, c3.Stderr)
	}
	if got := c3.Stderr.String(); got != fmt.Sprintf("Logged out of %s\n", profile) {
		t.Errorf("logout's stderr = %q", got)
	}
	if _, err := keyringCall(func() (string, error) { return keyring.Get(credstore.Service, item) }); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("keyring item %s after logout: err = %v, want not found", item, err)
	}
	if r := env.Do("GET", "/vehicle/", tok, nil); r.Status != 401 {
		t.Errorf("the token still works after logout: GET /vehicle/ = %d", r.Status)
	}

	// And a new process no longer finds a login.
	c4 := keyringCLI(t, env, dir, profile)
	err = tokenRun(ctx, &TokenOptions{IO: c4.IO, Session: c4.F.Session, Globals: c4.F.Globals})
	if cmdutil.ExitCode(err) != cmdutil.ExitAuth || c4.Stdout.Len() != 0 {
		t.Fatalf("vcs token after logout: %v (exit %d), stdout %q", err, cmdutil.ExitCode(err), c4.Stdout)
	}
}
