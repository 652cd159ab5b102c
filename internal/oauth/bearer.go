package oauth

import (
	"context"
	"errors"

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
	t, err := s.db.Read().GetToken(ctx, hashSecret(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return auth.Caller{}, api.Errorf(api.CodeUnauthorized, "the access token is not valid")
	case err != nil:
		return auth.Caller{}, err
	case t.Kind != store.TokenAccess:
		return auth.Caller{}, api.Errorf(api.CodeUnauthorized, "the access token is not valid")
	case t.RevokedAt != nil:
		return auth.Caller{}, api.Errorf(api.CodeUnauthorized, "the access token has been revoked")
	case !s.now().Before(t.ExpiresAt):
		return auth.Caller{}, api.Errorf(api.CodeExpired, "the access token has expired")
	}
	return auth.Caller{ClientID: t.ClientID, AccountID: t.AccountID}, nil
}
