package session_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/credstore"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
	"github.com/connected-vehicle/vcs/internal/session"
)

// newSession is the local profile's session against env, with credentials in dir.
func newSession(t testing.TB, baseURL, authURL, dir string) *session.Session {
	t.Helper()
	getenv := func(k string) string {
		switch k {
		case config.EnvBaseURL:
			return baseURL
		case config.EnvAuthURL:
			return authURL
		}
		return ""
	}
	cfg, err := config.Load(dir, getenv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Resolve(config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return &session.Session{Profile: p, Store: credstore.New(credstore.Options{Dir: dir, Insecure: true}), HTTP: http.DefaultClient}
}

// expiredLogin stores a real login whose access token the client believes expired.
func expiredLogin(t *testing.T, env *servertest.Env, s *session.Session) *session.TokenSet {
	t.Helper()
	ts := session.FromOAuth2(env.Login(server.DevUsername, server.DevPassword))
	ts.Expiry = time.Now().Add(-time.Minute)
	ts.Username, ts.AccountID = server.DevUsername, 1
	if err := s.Save(context.Background(), ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestTokenSourceRefreshesAndStores(t *testing.T) {
	env := servertest.New(t)
	s := newSession(t, env.URL, env.Server.AuthURL(), t.TempDir())
	old := expiredLogin(t, env, s)

	tok, err := s.TokenSource(context.Background()).Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken == old.AccessToken {
		t.Fatal("the expired token was not refreshed")
	}
	stored, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stored.AccessToken != tok.AccessToken || stored.RefreshToken == old.RefreshToken || stored.RefreshToken == "" {
		t.Fatal("the rotated pair was not written back to the store")
	}
	if stored.Username != server.DevUsername || stored.AccountID != 1 {
		t.Errorf("refresh lost who the tokens are for: %+v", stored)
	}
	if r := env.Do("GET", "/vehicle/", tok.AccessToken, nil); r.Status != 200 {
		t.Fatalf("refreshed token: %d", r.Status)
	}
	// A valid stored token is used as it is.
	again, err := s.TokenSource(context.Background()).Token()
	if err != nil || again.AccessToken != tok.AccessToken {
		t.Fatalf("second source: %v, same token %v", err, again.AccessToken == tok.AccessToken)
	}
}

func TestRefreshRejectedIsAnAuthError(t *testing.T) {
	env := servertest.New(t)
	s := newSession(t, env.URL, env.Server.AuthURL(), t.TempDir())
	ts := expiredLogin(t, env, s)
	ts.RefreshToken = "vcsr_revoked-or-unknown"
	if err := s.Save(context.Background(), ts); err != nil {
		t.Fatal(err)
	}
	_, err := s.TokenSource(context.Background()).Token()
	if cmdutil.ExitCode(err) != cmdutil.ExitAuth || !strings.Contains(err.Error(), "vcs login") {
		t.Fatalf("rejected refresh: %v (exit %d), want exit 4 and a hint to log in", err, cmdutil.ExitCode(err))
	}
}

func TestNotLoggedIn(t *testing.T) {
	env := servertest.New(t)
	s := newSession(t, env.URL, env.Server.AuthURL(), t.TempDir())
	_, err := s.TokenSource(context.Background()).Token()
	if cmdutil.ExitCode(err) != cmdutil.ExitAuth || !strings.Contains(err.Error(), "not logged in") {
		t.Fatalf("no credentials: %v", err)
	}
}

// TestConcurrentRefreshAcrossProcesses starts several vcs-like processes that all find the
// same expired token and refresh at once. The service revokes a whole login when one
// refresh token is used twice, so without the lock some would fail and the login would
// die. All must succeed and leave a working pair stored.
func TestConcurrentRefreshAcrossProcesses(t *testing.T) {
	env := servertest.New(t)
	dir := t.TempDir()
	s := newSession(t, env.URL, env.Server.AuthURL(), dir)
	expiredLogin(t, env, s)

	const procs = 4
	var wg sync.WaitGroup
	outs := make([]string, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRefresh$")
			cmd.Env = append(os.Environ(), "VCS_HELPER_REFRESH=1", "HELPER_DIR="+dir,
				"HELPER_BASE_URL="+env.URL, "HELPER_AUTH_URL="+env.Server.AuthURL())
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		})
	}
	wg.Wait()
	tokens := map[string]bool{}
	for i := range procs {
		if errs[i] != nil {
			t.Fatalf("process %d: %v\n%s", i, errs[i], outs[i])
		}
		_, tok, ok := strings.Cut(outs[i], "TOKEN=")
		if !ok {
			t.Fatalf("process %d printed no token:\n%s", i, outs[i])
		}
		tok, _, _ = strings.Cut(tok, "\n")
		tokens[tok] = true
		if r := env.Do("GET", "/vehicle/", tok, nil); r.Status != 200 {
			t.Fatalf("process %d's token: %d", i, r.Status)
		}
	}
	if len(tokens) != 1 {
		t.Errorf("%d different tokens: the processes refreshed more than once", len(tokens))
	}
	stored, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !tokens[stored.AccessToken] {
		t.Error("the stored token is not the one the processes use")
	}
	// The stored refresh token still works: the login was not revoked as a reuse.
	if _, err := s.Refresh(context.Background()); err != nil {
		t.Fatalf("refresh after the race: %v", err)
	}
}

// TestHelperRefresh is one of the processes of TestConcurrentRefreshAcrossProcesses.
func TestHelperRefresh(t *testing.T) {
	if os.Getenv("VCS_HELPER_REFRESH") != "1" {
		return // not a test of its own
	}
	dir := os.Getenv("HELPER_DIR")
	s := newSession(t, os.Getenv("HELPER_BASE_URL"), os.Getenv("HELPER_AUTH_URL"), dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok, err := s.TokenSource(ctx).Token()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("TOKEN=%s\n", tok.AccessToken)
	if _, err := os.Stat(filepath.Join(dir, credstore.FileName)); err != nil {
		t.Fatal(err)
	}
}
