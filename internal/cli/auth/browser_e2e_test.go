package auth

// End-to-end tests of `vcs login --no-browser` with a real browser: Debian's headless
// Chromium, driven with chromedp, opens the URL the CLI prints, signs in on the service's
// login page and is sent back to the CLI's loopback listener.
//
// They need Chromium at /usr/bin/chromium (apt-get install chromium), or at $CHROMIUM.
// Without it they skip, unless VCS_TEST_BROWSER=required, when they fail.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// browserTestTimeout bounds a whole browser test: the CLI's wait, Chromium's start and
// every page.
const browserTestTimeout = 60 * time.Second

// chromiumPath returns the Chromium binary to drive, or skips (fails, with
// VCS_TEST_BROWSER=required) when there is none.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		msg := fmt.Sprintf("no Chromium at %s (%v): apt-get install chromium, or set CHROMIUM to a Chromium binary", path, err)
		if os.Getenv("VCS_TEST_BROWSER") == "required" {
			t.Fatalf("VCS_TEST_BROWSER=required, but %s", msg)
		}
		t.Skip(msg)
	}
	return path
}

// tab is one tab of a headless Chromium that the test started.
type tab struct {
	t      *testing.T
	ctx    context.Context // the chromedp context of the tab
	output *servertest.SyncBuffer
}

// startChromium starts a headless Chromium with a fresh profile. The browser lives until
// ctx ends or the test does.
func startChromium(t *testing.T, ctx context.Context) *tab {
	t.Helper()
	path := chromiumPath(t)
	out := &servertest.SyncBuffer{}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// The machine has no network but loopback: without these, Chromium keeps trying
		// to reach Google's hosts.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Chromium must not touch the Secret Service: under .ci/run it is the CLI's,
		// unlocked for the keyring tests.
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.CombinedOutput(out),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser to exit, before t.TempDir is removed
	})
	// The first Do starts the browser; ctx bounds it.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start Chromium (%s): %v\n%s", path, err, tail(out.String(), 4000))
	}
	return &tab{t: t, ctx: bctx, output: out}
}

// do runs actions in the tab, failing the test with what the tab shows.
func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.fatal(what, err)
	}
}

// get runs one action that returns a value in the tab.
func get[T any](b *tab, what string, action chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, action)
	if err != nil {
		b.fatal(what, err)
	}
	return v
}

// fatal fails the test, showing where the tab is, its text and Chromium's output.
func (b *tab) fatal(what string, err error) {
	b.t.Helper()
	b.t.Fatalf("%s: %v\n%s", what, err, b.describe())
}

// describe tells where the tab is and what it shows, as far as the browser still answers.
func (b *tab) describe() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		loc = fmt.Sprintf("(unknown: %v)", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		text = fmt.Sprintf("(unknown: %v)", err)
	}
	return fmt.Sprintf("the tab is at %s and shows:\n%s\nChromium's output (end):\n%s", loc, text, tail(b.output.String(), 2000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// pendingLogin is a `vcs login --no-browser` running in a goroutine.
type pendingLogin struct {
	authURL  string
	redirect string // the CLI's loopback redirect URI
	finished chan struct{}
	err      error // loginRun's result, once finished is closed
}

// startBrowserLogin runs loginRun with NoBrowser and returns once the CLI has printed the
// URL and is waiting for the browser.
func startBrowserLogin(t *testing.T, ctx context.Context, c *clitest.CLI) *pendingLogin {
	t.Helper()
	opts := loginOptions(c)
	opts.NoBrowser = true
	opts.Timeout = browserTestTimeout
	urls := make(chan string, 1)
	opts.CallbackReady = func(u string) { urls <- u }

	ctx, cancel := context.WithCancel(ctx)
	l := &pendingLogin{finished: make(chan struct{})}
	go func() {
		defer close(l.finished)
		l.err = loginRun(ctx, opts)
	}()
	t.Cleanup(func() {
		cancel()
		<-l.finished
	})

	select {
	case l.authURL = <-urls:
	case <-l.finished:
		t.Fatalf("login ended before it was ready for the browser: %v\n%s", l.err, c.Stderr)
	case <-ctx.Done():
		t.Fatalf("login not ready for the browser: %v", ctx.Err())
	}

	// The URL the hook got is the one a person reads on stderr, on a line of its own.
	stderr := c.Stderr.String()
	if !strings.Contains(stderr, "\n  "+l.authURL+"\n") {
		t.Errorf("the login URL is not printed on stderr:\n%s\nwant the line:\n  %s", stderr, l.authURL)
	}
	if !strings.Contains(stderr, "Waiting for the browser to come back") {
		t.Errorf("stderr does not say that the CLI waits:\n%s", stderr)
	}
	if c.Stdout.Len() != 0 {
		t.Errorf("login wrote to stdout: %q", c.Stdout)
	}
	u, err := url.Parse(l.authURL)
	if err != nil {
		t.Fatalf("login URL %q: %v", l.authURL, err)
	}
	l.redirect = u.Query().Get("redirect_uri")
	if !strings.HasPrefix(l.redirect, "http://127.0.0.1:") {
		t.Fatalf("redirect_uri = %q, want the CLI's loopback listener", l.redirect)
	}
	return l
}

// wait returns loginRun's result.
func (l *pendingLogin) wait(t *testing.T, ctx context.Context) error {
	t.Helper()
	select {
	case <-l.finished:
		return l.err
	case <-ctx.Done():
		t.Fatalf("the CLI did not finish the login after the browser came back: %v", ctx.Err())
		return nil
	}
}

// openLoginPage follows the CLI's URL to the service's sign-in form.
func openLoginPage(b *tab, authURL string) {
	b.t.Helper()
	b.do("open the login URL", chromedp.Navigate(authURL))
	// The form is served only to a browser that sent back the login session cookie that
	// the authorize step set (Secure, on http://127.0.0.1).
	if title := get(b, "read the page title", chromedp.Title()); title != "Sign in · vcs" {
		b.fatal("the login URL did not lead to the sign-in form", fmt.Errorf("page title %q", title))
	}
	b.do("wait for the sign-in form",
		chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.WaitVisible(signInButton))
}

// signInButton is the form's "Sign in" button.
var signInButton = chromedp.CSS(`button[type="submit"][name="action"][value="login"]`)

// clickSignIn clicks "Sign in" and returns the status and URL of the page the browser
// ends up on (after redirects).
func clickSignIn(b *tab) (status int64, at string) {
	b.t.Helper()
	resp, err := chromedp.RunResponse(b.ctx, chromedp.Click(signInButton))
	if err != nil {
		b.fatal("click Sign in", err)
	}
	return resp.Status, resp.URL
}

// assertCallbackPage checks that the browser is on the CLI's "Logged in" page.
func assertCallbackPage(b *tab, redirect string, status int64, at string) {
	b.t.Helper()
	if status != 200 || !strings.HasPrefix(at, redirect+"?") {
		b.fatal("after Sign in", fmt.Errorf("the browser is at %s (status %d), want the CLI's %s", at, status, redirect))
	}
	b.do("wait for the CLI's page", chromedp.WaitVisible(chromedp.CSS("h1")))
	if h1 := get(b, "read the heading", chromedp.Text(chromedp.CSS("h1"))); h1 != "Logged in" {
		b.fatal("the CLI's page", fmt.Errorf("heading %q, want %q", h1, "Logged in"))
	}
	if text := get(b, "read the CLI's page", chromedp.Text(chromedp.CSS("body"))); !strings.Contains(text, "You can close this tab") {
		b.fatal("the CLI's page", fmt.Errorf("text %q lacks %q", text, "You can close this tab"))
	}
}

// assertLoggedInAsDemo checks what the CLI said and stored after a successful login.
func assertLoggedInAsDemo(t *testing.T, env *servertest.Env, c *clitest.CLI) {
	t.Helper()
	if !strings.Contains(c.Stderr.String(), "Logged in to local as demo (account 1)\n") {
		t.Errorf("stderr = %s", c.Stderr)
	}
	if c.Stdout.Len() != 0 {
		t.Errorf("login wrote to stdout: %q", c.Stdout)
	}
	ts, err := c.Session(t).Load(context.Background())
	if err != nil {
		t.Fatalf("no stored tokens: %v", err)
	}
	if ts.Username != server.DevUsername || ts.AccountID != 1 {
		t.Errorf("stored tokens of %q (account %d), want demo (account 1)", ts.Username, ts.AccountID)
	}
	if ts.RefreshToken == "" {
		t.Error("no refresh token was stored")
	}
	if r := env.Do("GET", "/vehicle/", ts.AccessToken, nil); r.Status != 200 {
		t.Fatalf("GET /vehicle/ with the stored access token: %d %s", r.Status, r.Body)
	}
}

func TestLoginInRealBrowser(t *testing.T) {
	chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), browserTestTimeout)
	defer cancel()
	env := servertest.New(t)
	c := clitest.New(t, env)

	login := startBrowserLogin(t, ctx, c)
	b := startChromium(t, ctx)
	openLoginPage(b, login.authURL)
	b.do("fill in the form",
		chromedp.SendKeys(chromedp.ID("username"), server.DevUsername),
		chromedp.SendKeys(chromedp.ID("password"), server.DevPassword))
	status, at := clickSignIn(b)
	assertCallbackPage(b, login.redirect, status, at)

	if err := login.wait(t, ctx); err != nil {
		t.Fatalf("login: %v\n%s", err, c.Stderr)
	}
	assertLoggedInAsDemo(t, env, c)
}

func TestLoginInRealBrowserWrongPasswordThenRight(t *testing.T) {
	chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), browserTestTimeout)
	defer cancel()
	env := servertest.New(t)
	c := clitest.New(t, env)

	login := startBrowserLogin(t, ctx, c)
	b := startChromium(t, ctx)
	openLoginPage(b, login.authURL)
	b.do("fill in the form with a wrong password",
		chromedp.SendKeys(chromedp.ID("username"), server.DevUsername),
		chromedp.SendKeys(chromedp.ID("password"), "not-"+server.DevPassword))
	status, at := clickSignIn(b)
	if status != 401 || strings.HasPrefix(at, login.redirect) {
		b.fatal("after Sign in with a wrong password", fmt.Errorf("the browser is at %s (status %d), want the sign-in form again with 401", at, status))
	}
	alert := chromedp.CSS(`p.message[role="alert"]`)
	b.do("wait for the error message", chromedp.WaitVisible(alert))
	if msg := get(b, "read the error message", chromedp.Text(alert)); !strings.Contains(msg, "Incorrect username or password") {
		b.fatal("the error message", fmt.Errorf("%q, want %q", msg, "Incorrect username or password."))
	}
	// The form comes back with the username kept and the password empty.
	if v := get(b, "read the username field", chromedp.Value(chromedp.ID("username"))); v != server.DevUsername {
		b.fatal("the username field", fmt.Errorf("holds %q, want %q", v, server.DevUsername))
	}
	if v := get(b, "read the password field", chromedp.Value(chromedp.ID("password"))); v != "" {
		b.fatal("the password field", errors.New("is not empty"))
	}

	// The CLI keeps waiting: a wrong password is the person's to fix in the browser.
	select {
	case <-login.finished:
		t.Fatalf("the CLI stopped waiting after a wrong password: %v\n%s", login.err, c.Stderr)
	default:
	}
	if strings.Contains(c.Stderr.String(), "Logged in") {
		t.Fatalf("stderr after a wrong password:\n%s", c.Stderr)
	}
	if _, err := c.Session(t).Load(context.Background()); cmdutil.ExitCode(err) != cmdutil.ExitAuth {
		t.Fatalf("something was stored after a wrong password: %v", err)
	}

	b.do("type the right password", chromedp.SendKeys(chromedp.ID("password"), server.DevPassword))
	status, at = clickSignIn(b)
	assertCallbackPage(b, login.redirect, status, at)
	if err := login.wait(t, ctx); err != nil {
		t.Fatalf("login: %v\n%s", err, c.Stderr)
	}
	assertLoggedInAsDemo(t, env, c)
}
