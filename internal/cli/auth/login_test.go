package auth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

func loginOptions(c *clitest.CLI) *LoginOptions {
	return &LoginOptions{IO: c.IO, Config: c.F.Config, Credentials: c.F.Credentials, HTTPClient: c.F.HTTPClient,
		Browser: c.F.Browser, Globals: c.F.Globals, Getenv: func(string) string { return "" },
		NoBrowser: true, Timeout: time.Minute}
}

// startLogin runs loginRun in the background and returns the authorize URL it prints once
// its listener is up, and where its result will arrive.
func startLogin(opts *LoginOptions) (string, <-chan error) {
	urls := make(chan string, 1)
	opts.CallbackReady = func(u string) { urls <- u }
	done := make(chan error, 1)
	go func() {
		done <- loginRun(context.Background(), opts)
		close(urls) // a login that fails before its listener is up yields "" rather than a hang
	}()
	return <-urls, done
}

// browse plays the user's browser: it follows the authorize URL, signs in on the service's
// page and follows the redirect to the CLI's loopback listener. It returns the page the
// listener showed.
func browse(t *testing.T, env *servertest.Env, authURL, username, password string) string {
	t.Helper()
	b := servertest.Browser()
	csrf := env.LoginPage(b, authURL)
	resp := env.SubmitLogin(b, csrf, username, password)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("login form: %d", resp.StatusCode)
	}
	back, err := b.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatalf("redirect to the CLI: %v", err)
	}
	defer back.Body.Close()
	page, _ := io.ReadAll(back.Body)
	return string(page)
}

func TestLoginWithBrowser(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	opts := loginOptions(c)
	authURL, done := startLogin(opts)

	u, _ := url.Parse(authURL)
	q := u.Query()
	redirect, _ := url.Parse(q.Get("redirect_uri"))
	if redirect.Hostname() != "127.0.0.1" || redirect.Port() == "" || redirect.Path != "/callback" {
		t.Errorf("redirect_uri = %s, want http://127.0.0.1:<port>/callback", redirect)
	}
	if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || len(q.Get("state")) < 16 {
		t.Errorf("authorize request lacks PKCE S256 or state: %v", q)
	}
	if !strings.Contains(c.Stderr.String(), authURL) {
		t.Errorf("the URL is not printed on stderr:\n%s", c.Stderr)
	}

	page := browse(t, env, authURL, server.DevUsername, server.DevPassword)
	if !strings.Contains(page, "close this tab") {
		t.Errorf("callback page = %s", page)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c.Stdout.Len() != 0 {
		t.Errorf("login wrote to stdout: %q", c.Stdout)
	}
	if !strings.Contains(c.Stderr.String(), "Logged in to local as demo (account 1)") {
		t.Errorf("stderr = %s", c.Stderr)
	}
	ts, err := c.Session(t).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r := env.Do("GET", "/vehicle/", ts.AccessToken, nil); r.Status != 200 || ts.RefreshToken == "" {
		t.Fatalf("stored token: %d, refresh %q", r.Status, ts.RefreshToken)
	}
}

func TestLoginCallbackIgnoresForeignState(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	opts := loginOptions(c)
	authURL, done := startLogin(opts)
	u, _ := url.Parse(authURL)
	redirect := u.Query().Get("redirect_uri")

	// Anything on this machine can hit the listener; a wrong state must not end the login.
	resp, err := http.Get(redirect + "?code=forged&state=wrong")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("forged callback: %d", resp.StatusCode)
	}
	browse(t, env, authURL, server.DevUsername, server.DevPassword)
	if err := <-done; err != nil {
		t.Fatalf("login after a forged callback: %v", err)
	}
}

func TestLoginTimeoutAndCancelStoreNothing(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)

	opts := loginOptions(c)
	opts.Timeout = 50 * time.Millisecond
	err := loginRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("timeout: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	opts = loginOptions(c)
	opts.CallbackReady = func(string) { cancel() }
	if err := loginRun(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := c.Session(t).Load(context.Background()); cmdutil.ExitCode(err) != cmdutil.ExitAuth {
		t.Fatalf("something was stored: %v", err)
	}
}

func TestLoginCancelledInBrowser(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	opts := loginOptions(c)
	authURL, done := startLogin(opts)

	b := servertest.Browser()
	csrf := env.LoginPage(b, authURL)
	resp, err := b.PostForm(env.Server.AuthURL()+"/OAuth/login", url.Values{"csrf": {csrf}, "action": {"cancel"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := b.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	back.Body.Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("cancelled login: %v", err)
	}
}

func TestLoginWithToken(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	tok := env.DemoToken()
	c.Stdin.WriteString(tok + "\n")
	opts := loginOptions(c)
	opts.WithToken = true
	if err := loginRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	ts, err := c.Session(t).Load(context.Background())
	if err != nil || ts.AccessToken != tok || ts.Username != "demo" {
		t.Fatalf("stored %+v, %v", ts, err)
	}

	// A token the service refuses is not stored, and the exit code says "credentials".
	c2 := clitest.New(t, env)
	c2.Stdin.WriteString("vcsa_not-a-real-token\n")
	opts = loginOptions(c2)
	opts.WithToken = true
	err = loginRun(context.Background(), opts)
	if cmdutil.ExitCode(err) != cmdutil.ExitAuth {
		t.Fatalf("bad token: %v (exit %d)", err, cmdutil.ExitCode(err))
	}
	if _, err := c2.Session(t).Load(context.Background()); err == nil {
		t.Fatal("a refused token was stored")
	}
}
