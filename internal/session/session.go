// Package session is a profile's login on the client side: the token set in the credential
// store, the OAuth 2.0 configuration of the profile's service, and a token source that
// refreshes an expired access token once, across processes, and stores the new pair.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/credstore"
)

// Paths of the service's OAuth endpoints.
const (
	pathAuthorize = "/OAuth/authorize"
	pathToken     = "/oauth/token"
	pathRevoke    = "/oauth/revoke"
)

// expiryLeeway refreshes a token this long before it expires, so that it does not expire
// on its way to the service.
const expiryLeeway = 30 * time.Second

// TokenSet is what is stored for a logged-in profile.
type TokenSet struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // zero: unknown (a token given with --with-token)
	// Username and AccountID say who the tokens act for.
	Username  string `json:"username,omitempty"`
	AccountID int64  `json:"account_id,omitempty"`
}

func (t *TokenSet) valid(now time.Time) bool {
	return t.AccessToken != "" && (t.Expiry.IsZero() || now.Add(expiryLeeway).Before(t.Expiry))
}

// Session is one profile's login.
type Session struct {
	Profile config.Profile
	Store   *credstore.Store
	// HTTP sends the token endpoint's requests (proxies, User-Agent, --debug).
	HTTP *http.Client
	Now  func() time.Time
}

func (s *Session) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// AuthError means the profile has no usable credentials: the user must log in (exit code 4).
type AuthError struct{ Err error }

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() error { return e.Err }

// AuthFailure marks the error for the CLI's exit code.
func (e *AuthError) AuthFailure() {}

// NotLoggedIn is the error of a profile without credentials.
func NotLoggedIn(profile string) error {
	return &AuthError{Err: fmt.Errorf("not logged in to profile %q: run `vcs login`%s", profile, profileFlag(profile))}
}

func profileFlag(profile string) string {
	if profile == config.LocalProfile {
		return ""
	}
	return " --profile " + profile
}

// Load returns the stored token set.
func (s *Session) Load(ctx context.Context) (*TokenSet, error) {
	raw, err := s.Store.Get(ctx, s.Profile.Name, credstore.KeyTokens)
	if errors.Is(err, credstore.ErrNotFound) {
		return nil, NotLoggedIn(s.Profile.Name)
	} else if err != nil {
		return nil, fmt.Errorf("read credentials: %w", err)
	}
	var ts TokenSet
	if err := json.Unmarshal([]byte(raw), &ts); err != nil || ts.AccessToken == "" {
		return nil, &AuthError{Err: fmt.Errorf("the stored credentials of profile %q are damaged: run `vcs login`%s", s.Profile.Name, profileFlag(s.Profile.Name))}
	}
	return &ts, nil
}

// Save stores ts.
func (s *Session) Save(ctx context.Context, ts *TokenSet) error {
	raw, err := json.Marshal(ts)
	if err != nil {
		return err
	}
	if err := s.Store.Set(ctx, s.Profile.Name, credstore.KeyTokens, string(raw)); err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	return nil
}

// Forget deletes the stored token set.
func (s *Session) Forget(ctx context.Context) error {
	if err := s.Store.Delete(ctx, s.Profile.Name, credstore.KeyTokens); err != nil {
		return fmt.Errorf("delete credentials: %w", err)
	}
	return nil
}

// ClientSecret returns the profile's client secret: from the environment or the built-in
// profile, else from the credential store.
func (s *Session) ClientSecret(ctx context.Context) (string, error) {
	if s.Profile.ClientSecret != "" {
		return s.Profile.ClientSecret, nil
	}
	secret, err := s.Store.Get(ctx, s.Profile.Name, credstore.KeyClientSecret)
	if errors.Is(err, credstore.ErrNotFound) {
		return "", &AuthError{Err: fmt.Errorf("no client secret for profile %q: set %s or run `vcs login%s --client-id %s` to store one",
			s.Profile.Name, config.EnvClientSecret, profileFlag(s.Profile.Name), s.Profile.ClientID)}
	}
	if err != nil {
		return "", fmt.Errorf("read the client secret: %w", err)
	}
	return secret, nil
}

// OAuthConfig is the profile's OAuth 2.0 client configuration. The client authenticates
// with HTTP Basic, as the seed says.
func (s *Session) OAuthConfig(ctx context.Context, redirectURL string) (*oauth2.Config, error) {
	secret, err := s.ClientSecret(ctx)
	if err != nil {
		return nil, err
	}
	return &oauth2.Config{
		ClientID:     s.Profile.ClientID,
		ClientSecret: secret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   s.Profile.AuthURL + pathAuthorize,
			TokenURL:  s.Profile.BaseURL + pathToken,
			AuthStyle: oauth2.AuthStyleInHeader,
		},
		RedirectURL: redirectURL,
	}, nil
}

// ClientCredentials is the configuration of the client_credentials grant of the profile's
// partner client.
func (s *Session) ClientCredentials(ctx context.Context) (*clientcredentials.Config, error) {
	conf, err := s.OAuthConfig(ctx, "")
	if err != nil {
		return nil, err
	}
	return &clientcredentials.Config{ClientID: conf.ClientID, ClientSecret: conf.ClientSecret,
		TokenURL: conf.Endpoint.TokenURL, AuthStyle: conf.Endpoint.AuthStyle}, nil
}

// RevokeURL is the profile's revocation endpoint.
func (s *Session) RevokeURL() string { return s.Profile.BaseURL + pathRevoke }

// WithHTTP returns ctx carrying the session's HTTP client for golang.org/x/oauth2.
func (s *Session) WithHTTP(ctx context.Context) context.Context {
	if s.HTTP == nil {
		return ctx
	}
	return context.WithValue(ctx, oauth2.HTTPClient, s.HTTP)
}

// FromOAuth2 converts a token endpoint answer into a token set.
func FromOAuth2(t *oauth2.Token) *TokenSet {
	return &TokenSet{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, Expiry: t.Expiry}
}

// TokenSource returns the source of the profile's access token: the stored one while it is
// valid, then a refreshed one.
func (s *Session) TokenSource(ctx context.Context) oauth2.TokenSource {
	return s.TokenSourceFrom(ctx, nil)
}

// TokenSourceFrom is TokenSource starting from cur, a token set the caller has just
// loaded, so that the store is not read again for the first token.
func (s *Session) TokenSourceFrom(ctx context.Context, cur *TokenSet) oauth2.TokenSource {
	return &tokenSource{ctx: ctx, s: s, cur: cur}
}

type tokenSource struct {
	ctx context.Context
	s   *Session
	mu  sync.Mutex
	cur *TokenSet
}

func (ts *tokenSource) Token() (*oauth2.Token, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.cur == nil || !ts.cur.valid(ts.s.now()) {
		cur, err := ts.s.current(ts.ctx, false)
		if err != nil {
			return nil, err
		}
		ts.cur = cur
	}
	return &oauth2.Token{AccessToken: ts.cur.AccessToken, TokenType: "Bearer", Expiry: ts.cur.Expiry}, nil
}

// current returns a valid token set, refreshing the stored one when it has expired (or
// always, with force). The refresh runs under the profile's lock, and re-reads the store
// once it holds it: another process may have refreshed meanwhile, and the service revokes
// a whole login when one refresh token is used twice.
func (s *Session) current(ctx context.Context, force bool) (*TokenSet, error) {
	ts, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	if !force && ts.valid(s.now()) {
		return ts, nil
	}
	unlock, err := s.Store.Lock(ctx, s.Profile.Name)
	if err != nil {
		return nil, fmt.Errorf("lock credentials: %w", err)
	}
	defer unlock()
	if ts, err = s.Load(ctx); err != nil {
		return nil, err
	}
	if !force && ts.valid(s.now()) {
		return ts, nil
	}
	expired := &AuthError{Err: fmt.Errorf("the login of profile %q has expired: run `vcs login`%s", s.Profile.Name, profileFlag(s.Profile.Name))}
	if ts.RefreshToken == "" {
		return nil, expired
	}
	conf, err := s.OAuthConfig(ctx, "")
	if err != nil {
		return nil, err
	}
	fresh, err := conf.TokenSource(s.WithHTTP(ctx), &oauth2.Token{RefreshToken: ts.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == api.OAuthInvalidGrant {
			// Stored by a process that did not take the lock (an older vcs)? Use it if so.
			if again, lerr := s.Load(ctx); lerr == nil && again.RefreshToken != ts.RefreshToken && again.valid(s.now()) {
				return again, nil
			}
			return nil, expired
		}
		return nil, fmt.Errorf("refresh the access token: %w", err)
	}
	next := FromOAuth2(fresh)
	next.Username, next.AccountID = ts.Username, ts.AccountID
	if next.RefreshToken == "" {
		next.RefreshToken = ts.RefreshToken
	}
	if err := s.Save(ctx, next); err != nil {
		return nil, err
	}
	return next, nil
}

// Refresh refreshes the access token now, whatever its expiry, and stores the new pair.
func (s *Session) Refresh(ctx context.Context) (*TokenSet, error) {
	return s.current(ctx, true)
}
