package oauth

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/auth"
	"github.com/connected-vehicle/vcs/internal/store"
)

// Authenticate returns the caller that an access token stands for. A missing, unknown or
// revoked token is UNAUTHORIZED, an expired one EXPIRED, so that clients know to refresh.
func (s *Server) Authenticate(ctx context.Context, token string) (auth.Caller, error) {
	if token == "" {
		return auth.Caller{}, api.Errorf(api.CodeUnauthorized, "an access token is required (Authorization: Bearer <token>)")
	}
	hash := hashSecret(token)
	now := s.now()
	gen := s.db.TokenGeneration() // read before the lookup: see tokenCache
	if c, ok := s.tokens.get(hash, gen, now); ok {
		if !now.Before(c.expiresAt) {
			return auth.Caller{}, api.Errorf(api.CodeExpired, "the access token has expired")
		}
		return c.caller, nil
	}
	t, err := s.db.Read().GetToken(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return auth.Caller{}, api.Errorf(api.CodeUnauthorized, "the access token is not valid")
	case err != nil:
		return auth.Caller{}, err
	case t.Kind != store.TokenAccess:
		return auth.Caller{}, api.Errorf(api.CodeUnauthorized, "the access token is not valid")
	case t.RevokedAt != nil:
		return auth.Caller{}, api.Errorf(api.CodeUnauthorized, "the access token has been revoked")
	case !now.Before(t.ExpiresAt):
		return auth.Caller{}, api.Errorf(api.CodeExpired, "the access token has expired")
	}
	caller := auth.Caller{ClientID: t.ClientID, AccountID: t.AccountID}
	s.tokens.put(hash, cachedToken{caller: caller, expiresAt: t.ExpiresAt, gen: gen, at: now})
	return caller, nil
}

// Bounds of the token cache.
const (
	// tokenCacheTTL bounds how long a token revoked by another process (an operator's
	// `vcs server client delete`, another server on the same PostgreSQL database) keeps
	// working here. Revocations in this process take effect at once.
	tokenCacheTTL = 10 * time.Second
	tokenCacheMax = 10_000
)

// tokenCache remembers valid access tokens for a few seconds, sparing the database one
// query per request. An entry is used only while the store's token generation is the one
// read before its lookup: any revocation or deletion committed in this process since then
// makes every entry stale. Unknown and revoked tokens are never cached, so guessing cannot
// fill it.
type tokenCache struct {
	mu sync.Mutex
	m  map[string]cachedToken
}

type cachedToken struct {
	caller    auth.Caller
	expiresAt time.Time
	gen       uint64
	at        time.Time
}

func (c *tokenCache) get(hash string, gen uint64, now time.Time) (cachedToken, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || e.gen != gen || now.Sub(e.at) > tokenCacheTTL || now.Before(e.at) {
		return cachedToken{}, false
	}
	return e, true
}

func (c *tokenCache) put(hash string, e cachedToken) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= tokenCacheMax {
		c.m = make(map[string]cachedToken) // rarely full: starting over is cheaper than LRU
	}
	c.m[hash] = e
}
