// Package servertest runs the real service for tests: the production handler on a loopback
// listener over a SQLite file in a temporary directory, seeded like `vcs server --dev`.
// Client tests use it as their server; nothing in it fakes the service.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/delivery"
	"github.com/connected-vehicle/vcs/internal/oauth"
	"github.com/connected-vehicle/vcs/internal/server"
)

// Env is a running service.
type Env struct {
	t       testing.TB
	cfg     server.Config
	handler atomic.Pointer[http.Handler]

	HTTP    *httptest.Server
	URL     string // base URL
	Server  *server.Server
	DataDir string
	Seed    *server.DevSeed
	Logs    *SyncBuffer // everything the service logged, as JSON lines
}

// Option changes the service's configuration before it opens.
type Option func(*server.Config)

// WithNow sets the service's clock.
func WithNow(now func() time.Time) Option { return func(c *server.Config) { c.Now = now } }

// WithBasePath serves the data API under a path prefix.
func WithBasePath(p string) Option { return func(c *server.Config) { c.BasePath = p } }

// WithLoginLimits sets the failed-login limits.
func WithLoginLimits(l oauth.LoginLimits) Option { return func(c *server.Config) { c.LoginLimits = l } }

// WithEnv runs the service as environment env (server.EnvSandbox or EnvProduction).
func WithEnv(env string) Option { return func(c *server.Config) { c.Env = env } }

// WithDelivery sets the webhook retry schedule and the timeout of one attempt.
func WithDelivery(p delivery.Policy, timeout time.Duration) Option {
	return func(c *server.Config) { c.DeliveryPolicy, c.DeliveryTimeout = &p, timeout }
}

// WithLogger sends the service's log to l instead of Logs.
func WithLogger(l *slog.Logger) Option { return func(c *server.Config) { c.Logger = l } }

// New starts a seeded sandbox service and stops it when the test ends.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	e := &Env{t: t, Logs: &SyncBuffer{}}
	e.HTTP = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*e.handler.Load()).ServeHTTP(w, r)
	}))
	e.HTTP.Start()
	t.Cleanup(e.HTTP.Close)

	e.cfg = server.Config{
		DataDir:      t.TempDir(),
		Env:          server.EnvSandbox,
		Logger:       slog.New(slog.NewJSONHandler(e.Logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		PasswordCost: bcrypt.MinCost, // the hashes are real, only cheaper
	}
	for _, o := range opts {
		o(&e.cfg)
	}
	e.cfg.PublicBaseURL = e.HTTP.URL + e.cfg.BasePath
	e.URL = e.cfg.PublicBaseURL
	e.DataDir = e.cfg.DataDir
	e.open()
	t.Cleanup(func() { e.Server.Close() })
	return e
}

func (e *Env) open() {
	e.t.Helper()
	srv, err := server.Open(context.Background(), e.cfg)
	if err != nil {
		e.t.Fatalf("open server: %v", err)
	}
	seed, err := srv.SeedDev(context.Background())
	if err != nil {
		e.t.Fatalf("seed: %v", err)
	}
	h := srv.Handler()
	e.Server, e.Seed = srv, seed
	e.handler.Store(&h)
}

// Restart closes the service and its database and opens them again on the same directory
// and address, as a process restart would.
func (e *Env) Restart() {
	e.t.Helper()
	if err := e.Server.Close(); err != nil {
		e.t.Fatalf("close server: %v", err)
	}
	e.open()
}

// OAuthConfig is the development client's golang.org/x/oauth2 configuration.
func (e *Env) OAuthConfig(redirectURI string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     server.DevClientID,
		ClientSecret: server.DevClientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   e.Server.AuthURL() + oauth.PathAuthorize,
			TokenURL:  e.URL + oauth.PathToken,
			AuthStyle: oauth2.AuthStyleInHeader,
		},
		RedirectURL: redirectURI,
	}
}

// ClientToken returns a client-credentials access token of the development client.
func (e *Env) ClientToken() string {
	e.t.Helper()
	return e.ClientTokenFor(server.DevClientID, server.DevClientSecret)
}

// ClientTokenFor returns a client-credentials access token of a client.
func (e *Env) ClientTokenFor(id, secret string) string {
	e.t.Helper()
	cc := clientcredentials.Config{
		ClientID: id, ClientSecret: secret,
		TokenURL: e.URL + oauth.PathToken, AuthStyle: oauth2.AuthStyleInHeader,
	}
	tok, err := cc.Token(context.Background())
	if err != nil {
		e.t.Fatalf("client credentials: %v", err)
	}
	return tok.AccessToken
}

// Browser is a cookie-keeping HTTP client that does not follow redirects, as a person's
// browser would be watched step by step.
func Browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// LoginPage follows an authorize URL to the login page with browser and returns the form's
// CSRF token.
func (e *Env) LoginPage(browser *http.Client, authorizeURL string) string {
	e.t.Helper()
	resp, err := browser.Get(authorizeURL)
	if err != nil {
		e.t.Fatalf("authorize: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		e.t.Fatalf("authorize: status %d, want 302", resp.StatusCode)
	}
	resp, err = browser.Get(resp.Header.Get("Location"))
	if err != nil {
		e.t.Fatalf("login page: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		e.t.Fatalf("login page: status %d, no form:\n%s", resp.StatusCode, body)
	}
	return string(m[1])
}

// SubmitLogin posts the login form and returns the response (302 on success).
func (e *Env) SubmitLogin(browser *http.Client, csrf, username, password string) *http.Response {
	e.t.Helper()
	resp, err := browser.PostForm(e.Server.AuthURL()+oauth.PathLogin, url.Values{
		"username": {username}, "password": {password}, "csrf": {csrf}, "action": {"login"},
	})
	if err != nil {
		e.t.Fatalf("submit login: %v", err)
	}
	return resp
}

// Authorize runs the browser half of the authorization code flow for username and returns
// the code and state that reached redirectURI.
func (e *Env) Authorize(conf *oauth2.Config, username, password string, authOpts ...oauth2.AuthCodeOption) (code, state string) {
	e.t.Helper()
	b := Browser()
	csrf := e.LoginPage(b, conf.AuthCodeURL("st-"+username, authOpts...))
	resp := e.SubmitLogin(b, csrf, username, password)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		e.t.Fatalf("login: status %d, want 302", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		e.t.Fatalf("login redirect: %v", err)
	}
	if !strings.HasPrefix(loc.String(), conf.RedirectURL) {
		e.t.Fatalf("login redirected to %s, want %s", loc, conf.RedirectURL)
	}
	return loc.Query().Get("code"), loc.Query().Get("state")
}

// Login runs the whole authorization code flow with PKCE and returns the user's tokens.
func (e *Env) Login(username, password string) *oauth2.Token {
	e.t.Helper()
	conf := e.OAuthConfig("http://127.0.0.1:41234/callback")
	verifier := oauth2.GenerateVerifier()
	code, _ := e.Authorize(conf, username, password, oauth2.S256ChallengeOption(verifier))
	tok, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
	if err != nil {
		e.t.Fatalf("exchange code: %v", err)
	}
	return tok
}

// DemoToken is an access token of the seeded demo account.
func (e *Env) DemoToken() string {
	return e.Login(server.DevUsername, server.DevPassword).AccessToken
}

// Response is a finished data API exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Error decodes an error body.
func (r *Response) Error(t testing.TB) *api.Error {
	t.Helper()
	var b api.ErrorBody
	r.JSON(t, &b)
	if b.Error == nil {
		t.Fatalf("no error in %s", r.Body)
	}
	return b.Error
}

// Do sends a data API request with token (if any) and body (if any: a string is sent as is,
// anything else as JSON) to the path under the base URL.
func (e *Env) Do(method, path, token string, body any) *Response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.t.Fatalf("request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// SyncBuffer is a bytes.Buffer safe for a logger and a test to share.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
