package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/store"
)

// Client is a registered partner client as an operator sees it. Secret is set only in the
// result of CreateClient: it is shown once and stored hashed.
type Client struct {
	ID           string   `json:"client_id"`
	Secret       string   `json:"client_secret,omitempty"`
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirect_uris"`
}

// CreateClient registers a partner client and returns it with its secret.
func (s *Server) CreateClient(ctx context.Context, name string, redirectURIs []string) (*Client, error) {
	return s.createClient(ctx, newID("c_"), "", name, redirectURIs)
}

// EnsureClient registers a client with a fixed id and secret unless one with that id
// exists. It exists for the development server, whose client the CLI knows by name.
func (s *Server) EnsureClient(ctx context.Context, id, secret, name string, redirectURIs []string) (*Client, error) {
	c, err := s.db.Read().GetClient(ctx, id)
	switch {
	case err == nil:
		return &Client{ID: c.ID, Secret: secret, Name: c.Name, RedirectURIs: c.RedirectURIs}, nil
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return s.createClient(ctx, id, secret, name, redirectURIs)
}

func (s *Server) createClient(ctx context.Context, id, secret, name string, redirectURIs []string) (*Client, error) {
	name = strings.TrimSpace(name)
	var fe api.FieldErrors
	if name == "" || len(name) > 100 {
		fe.Add("name", api.CodeInvalid, "name must be 1 to 100 characters")
	}
	for _, u := range redirectURIs {
		if err := checkRedirectURI(u); err != nil {
			fe.Add("redirect_uri", api.CodeInvalid, "%v", err)
		}
	}
	if err := fe.Err("client could not be created"); err != nil {
		return nil, err
	}
	var hash string
	if secret == "" {
		secret, hash = newSecret(prefixSecret)
	} else {
		hash = hashSecret(secret)
	}
	if redirectURIs == nil {
		redirectURIs = []string{}
	}
	rec := &store.Client{ID: id, Name: name, SecretHash: hash, RedirectURIs: redirectURIs, CreatedAt: s.now()}
	if err := s.db.WriteTx(ctx, func(q *store.Queries) error { return q.InsertClient(ctx, rec) }); err != nil {
		return nil, err
	}
	return &Client{ID: id, Secret: secret, Name: name, RedirectURIs: redirectURIs}, nil
}

// ListClients returns every registered client, without secrets.
func (s *Server) ListClients(ctx context.Context) ([]Client, error) {
	rows, err := s.db.Read().ListClients(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Client, len(rows))
	for i, c := range rows {
		out[i] = Client{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs}
	}
	return out, nil
}

// DeleteClient removes a client; its tokens stop working at once.
func (s *Server) DeleteClient(ctx context.Context, id string) error {
	err := s.db.WriteTx(ctx, func(q *store.Queries) error { return q.DeleteClient(ctx, id) })
	if errors.Is(err, store.ErrNotFound) {
		return api.Errorf(api.CodeNotFound, "no client %q", id)
	}
	return err
}

// checkRedirectURI accepts absolute https URIs and http URIs on loopback hosts, without
// fragments (RFC 6749 §3.1.2).
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("redirect URI %q is not an absolute URL", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect URI %q must not have a fragment", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("redirect URI %q must use https (http only on 127.0.0.1, [::1] or localhost)", raw)
	}
	return fmt.Errorf("redirect URI %q must use https", raw)
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// redirectAllowed reports whether requested matches one of the registered redirect URIs:
// exactly, or, for a registered http://127.0.0.1/... or http://[::1]/... without a port,
// with any port (RFC 8252 §7.3: native apps listen on an ephemeral port).
func redirectAllowed(registered []string, requested string) bool {
	req, err := url.Parse(requested)
	if err != nil {
		return false
	}
	for _, r := range registered {
		if r == requested {
			return true
		}
		reg, err := url.Parse(r)
		if err != nil || reg.Scheme != "http" || reg.Port() != "" {
			continue
		}
		if h := reg.Hostname(); h != "127.0.0.1" && h != "::1" {
			continue
		}
		if req.Scheme == reg.Scheme && req.Hostname() == reg.Hostname() && req.Port() != "" &&
			req.User == nil && req.EscapedPath() == reg.EscapedPath() && req.RawQuery == reg.RawQuery &&
			req.Fragment == "" && !strings.Contains(requested, "#") {
			return true
		}
	}
	return false
}

// authenticateClient checks the client credentials of a token or revocation request: HTTP
// Basic (client_secret_basic, the seed's way) or client_id and client_secret in the form
// (client_secret_post), not both.
func (s *Server) authenticateClient(ctx context.Context, r *http.Request) (*store.Client, *tokenError) {
	id, secret, basic := r.BasicAuth()
	postID, postSecret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	switch {
	case basic && postSecret != "":
		return nil, badRequest(api.OAuthInvalidRequest, "send client credentials in the Authorization header or the form, not both")
	case basic:
		// RFC 6749 §2.3.1: both parts are form-encoded before Basic encoding.
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return nil, invalidClient(true)
		}
	case postID != "" || postSecret != "":
		id, secret = postID, postSecret
	default:
		return nil, invalidClient(false)
	}
	if id == "" || secret == "" {
		return nil, invalidClient(basic)
	}
	c, err := s.db.Read().GetClient(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			return nil, serverError(err)
		}
		// Spend the same hashing and comparison on unknown ids as on wrong secrets.
		c = &store.Client{SecretHash: strings.Repeat("0", 64)}
	}
	if !hashesEqual(hashSecret(secret), c.SecretHash) || c.ID == "" {
		return nil, invalidClient(basic)
	}
	return c, nil
}
