// Package auth holds `vcs login`, `vcs logout` and `vcs token`: getting, dropping and
// printing a profile's credentials.
package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/credstore"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/session"
)

// LoginOptions are the inputs of `vcs login`.
type LoginOptions struct {
	IO          *iostreams.IOStreams
	Config      func() (*config.Config, error)
	Credentials func() (*credstore.Store, error)
	HTTPClient  func() (*http.Client, error)
	Browser     cmdutil.Browser
	Globals     *cmdutil.Globals
	Getenv      func(string) string

	NoBrowser         bool
	WithToken         bool
	BaseURL           string
	AuthURL           string
	ClientID          string
	ClientSecretStdin bool
	Timeout           time.Duration

	// CallbackReady, when set, is told the redirect URI once the loopback listener is up.
	CallbackReady func(authURL string)
}

// NewCmdLogin returns `vcs login`; runF replaces the run function in tests.
func NewCmdLogin(f *cmdutil.Factory, runF func(context.Context, *LoginOptions) error) *cobra.Command {
	opts := &LoginOptions{IO: f.IOStreams, Config: f.Config, Credentials: f.Credentials,
		HTTPClient: f.HTTPClient, Browser: f.Browser, Globals: f.Globals, Getenv: os.Getenv}
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Log in to the service in your browser",
		Long: `Log in with OAuth 2.0 in your browser (authorization code flow with PKCE, RFC 8252).

vcs listens on 127.0.0.1 on a random port, opens the service's login page in your browser
and waits for it to send you back. The tokens are stored in the OS keyring (or, where there
is none, in a 0600 file next to the configuration) and refreshed when they expire.

With --no-browser, or when no browser can be opened (SSH sessions, no display), the URL is
printed for you to open anywhere that can reach this machine's loopback address.

To use another service, give its address and your partner client once; they are saved as
the profile:

  vcs login --profile prod --base-url https://api.example.com --client-id c_abc123

The client secret is asked for (or read from stdin with --client-secret-stdin, or taken
from VCS_CLIENT_SECRET) and stored in the keyring.`,
		Example: `  vcs login
  vcs login --no-browser
  echo "$TOKEN" | vcs login --with-token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.WithToken && opts.ClientSecretStdin {
				return cmdutil.FlagErrorf("--with-token and --client-secret-stdin both read stdin; use one")
			}
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return loginRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.NoBrowser, "no-browser", false, "print the login URL instead of opening a browser")
	fl.BoolVar(&opts.WithToken, "with-token", false, "read an access token from standard input")
	fl.StringVar(&opts.BaseURL, "base-url", "", "`URL` of the service's API (saved to the profile)")
	fl.StringVar(&opts.AuthURL, "auth-url", "", "`URL` of the service's login pages (saved to the profile)")
	fl.StringVar(&opts.ClientID, "client-id", "", "your partner client's `id` (saved to the profile)")
	fl.BoolVar(&opts.ClientSecretStdin, "client-secret-stdin", false, "read the client secret from standard input")
	fl.DurationVar(&opts.Timeout, "timeout", 5*time.Minute, "how long to wait for the browser")
	return cmd
}

func loginRun(ctx context.Context, opts *LoginOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	profile, err := cfg.Resolve(config.Overrides{Profile: opts.Globals.Profile,
		BaseURL: opts.BaseURL, AuthURL: opts.AuthURL, ClientID: opts.ClientID})
	if err != nil {
		return err
	}
	store, err := opts.Credentials()
	if err != nil {
		return err
	}
	hc, err := opts.HTTPClient()
	if err != nil {
		return err
	}
	s := &session.Session{Profile: profile, Store: store, HTTP: hc}

	// A secret given now is stored only once the login has worked.
	newSecret := ""
	if opts.ClientSecretStdin {
		if newSecret, err = cmdutil.ReadLine(opts.IO.In); err != nil || strings.TrimSpace(newSecret) == "" {
			return cmdutil.FlagErrorf("--client-secret-stdin: no secret on standard input")
		}
	} else if profile.ClientSecret == "" && !opts.WithToken {
		if _, err := s.ClientSecret(ctx); err != nil {
			if newSecret, err = cmdutil.PromptSecret(opts.IO, fmt.Sprintf("Client secret of %s: ", profile.ClientID), "--client-secret-stdin"); err != nil {
				return err
			}
		}
	}
	if newSecret != "" {
		s.Profile.ClientSecret = newSecret
	}

	var ts *session.TokenSet
	if opts.WithToken {
		token, err := cmdutil.ReadLine(opts.IO.In)
		token = strings.TrimSpace(token)
		if err != nil || token == "" {
			return cmdutil.FlagErrorf("--with-token: no token on standard input")
		}
		ts = &session.TokenSet{AccessToken: token}
	} else {
		if ts, err = browserLogin(ctx, opts, s); err != nil {
			return err
		}
	}

	if err := identify(ctx, s, ts); err != nil {
		return err
	}

	if err := s.Save(ctx, ts); err != nil {
		return err
	}
	if newSecret != "" {
		if err := store.Set(ctx, profile.Name, credstore.KeyClientSecret, newSecret); err != nil {
			return fmt.Errorf("store the client secret: %w", err)
		}
	}
	if opts.BaseURL != "" || opts.AuthURL != "" || opts.ClientID != "" {
		if err := cfg.SaveProfile(profile); err != nil {
			return err
		}
	}
	who := "a client token"
	if ts.Username != "" {
		who = fmt.Sprintf("%s (account %d)", ts.Username, ts.AccountID)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Logged in to %s as %s\n", profile.Name, who)
	return nil
}

// browserLogin runs the authorization code flow with PKCE through a loopback listener
// (RFC 8252 §7.3) and returns the tokens.
func browserLogin(ctx context.Context, opts *LoginOptions, s *session.Session) (*session.TokenSet, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the browser's return: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	conf, err := s.OAuthConfig(ctx, redirect)
	if err != nil {
		return nil, err
	}
	state := randomString()
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))

	results := make(chan callbackResult, 1)
	srv := &http.Server{Handler: &callbackHandler{state: state, results: results}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		// Shutdown, not Close: the browser's page may still be on its way out.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	w := opts.IO.ErrOut
	fmt.Fprintf(w, "To log in to %s, open this URL in a browser:\n\n  %s\n\n", s.Profile.Name, authURL)
	if opts.NoBrowser || !canOpenBrowser(opts.Getenv) {
		fmt.Fprintln(w, "Waiting for the browser to come back (Ctrl-C to cancel)...")
	} else if err := opts.Browser.Browse(authURL); err != nil {
		fmt.Fprintf(w, "Could not open a browser (%v); open the URL above yourself.\n", err)
	} else {
		fmt.Fprintln(w, "Opened your browser. Waiting for it to come back (Ctrl-C to cancel)...")
	}
	if opts.CallbackReady != nil {
		opts.CallbackReady(authURL)
	}

	timer := time.NewTimer(opts.Timeout)
	defer timer.Stop()
	var res callbackResult
	select {
	case res = <-results:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, fmt.Errorf("timed out after %s waiting for the browser; nothing was stored", opts.Timeout)
	}
	if res.err != nil {
		return nil, res.err
	}
	tok, err := conf.Exchange(s.WithHTTP(ctx), res.code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("exchange the authorization code: %w", err)
	}
	return session.FromOAuth2(tok), nil
}

type callbackResult struct {
	code string
	err  error
}

// callbackHandler receives the browser at the redirect URI. Requests with the wrong state
// are answered and ignored: anything on this machine can send one, and it must not end
// the login.
type callbackHandler struct {
	state   string
	results chan callbackResult
}

var callbackPage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>vcs</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:30rem;margin:15vh auto;padding:0 1rem}</style></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p></body></html>`))

func (h *callbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	page := func(status int, title, msg string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = callbackPage.Execute(w, struct{ Title, Message string }{title, msg})
	}
	if q.Get("state") != h.state {
		page(http.StatusBadRequest, "Login failed", "This page did not come from the login that vcs started. Return to the terminal.")
		return
	}
	var res callbackResult
	switch {
	case q.Get("error") == api.OAuthAccessDenied:
		res.err = errors.New("the login was cancelled in the browser")
		page(http.StatusOK, "Login cancelled", "You can close this tab and return to the terminal.")
	case q.Get("error") != "":
		res.err = fmt.Errorf("the service refused the login: %s: %s", q.Get("error"), q.Get("error_description"))
		page(http.StatusOK, "Login failed", "The service refused the login. Return to the terminal for details.")
	case q.Get("code") == "":
		page(http.StatusBadRequest, "Login failed", "The service sent no authorization code.")
		return
	default:
		res.code = q.Get("code")
		page(http.StatusOK, "Logged in", "You can close this tab and return to the terminal.")
	}
	select {
	case h.results <- res:
	default: // a result is already waiting; the first one wins
	}
}

// canOpenBrowser reports whether a browser can show up for the user: not over SSH, and on
// Linux and the BSDs not without a display.
func canOpenBrowser(getenv func(string) string) bool {
	if getenv("SSH_CONNECTION") != "" || getenv("SSH_TTY") != "" {
		return false
	}
	switch runtime.GOOS {
	case "darwin", "windows":
		return true
	}
	return getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != ""
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
