package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"regexp"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/store"
)

// maxFormSize bounds token and revocation request bodies.
const maxFormSize = 64 << 10

// tokenError is a token endpoint failure with its HTTP status (RFC 6749 §5.2).
type tokenError struct {
	status int
	body   api.OAuthError
	basic  bool  // the client used HTTP Basic: answer 401 with a Basic challenge
	cause  error // internal cause of a server_error, for the log only
}

func badRequest(code, desc string) *tokenError {
	return &tokenError{status: http.StatusBadRequest, body: api.OAuthError{Code: code, Description: desc}}
}

func invalidGrant(desc string) *tokenError { return badRequest(api.OAuthInvalidGrant, desc) }

func invalidClient(basic bool) *tokenError {
	return &tokenError{status: http.StatusUnauthorized, basic: basic,
		body: api.OAuthError{Code: api.OAuthInvalidClient, Description: "client authentication failed"}}
}

func serverError(err error) *tokenError {
	return &tokenError{status: http.StatusInternalServerError, cause: err,
		body: api.OAuthError{Code: api.OAuthServerError, Description: "the server could not complete the request"}}
}

func writeTokenJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json;charset=UTF-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) writeTokenError(w http.ResponseWriter, r *http.Request, e *tokenError) {
	if e.cause != nil {
		s.log.ErrorContext(r.Context(), "token endpoint failed", "err", e.cause)
	}
	if e.basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="vcs", charset="UTF-8"`)
	}
	writeTokenJSON(w, e.status, e.body)
}

// parseForm reads a form-encoded body of at most maxFormSize; parameters in the query
// string are not read (RFC 6749 §3.2).
func parseForm(w http.ResponseWriter, r *http.Request) *tokenError {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return badRequest(api.OAuthInvalidRequest, "the body must be application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormSize)
	if err := r.ParseForm(); err != nil {
		return badRequest(api.OAuthInvalidRequest, "the body is not a valid form")
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			return badRequest(api.OAuthInvalidRequest, "parameter "+k+" is repeated")
		}
	}
	return nil
}

// HandleToken serves POST /oauth/token.
func (s *Server) HandleToken(w http.ResponseWriter, r *http.Request) {
	if e := parseForm(w, r); e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	client, e := s.authenticateClient(r.Context(), r)
	if e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	var tok *api.Token
	switch gt := r.PostForm.Get("grant_type"); gt {
	case api.GrantAuthorizationCode:
		tok, e = s.exchangeCode(r.Context(), client, r.PostForm.Get("code"), r.PostForm.Get("redirect_uri"), r.PostForm.Get("code_verifier"))
	case api.GrantClientCredentials:
		tok, e = s.clientCredentials(r.Context(), client)
	case api.GrantRefreshToken:
		tok, e = s.refresh(r.Context(), client, r.PostForm.Get("refresh_token"))
	case "":
		e = badRequest(api.OAuthInvalidRequest, "grant_type is required")
	default:
		e = badRequest(api.OAuthUnsupportedGrantType, "grant_type must be authorization_code, client_credentials or refresh_token")
	}
	if e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	writeTokenJSON(w, http.StatusOK, tok)
}

// pkceVerifier is RFC 7636 §4.1's code_verifier (and, in S256 form, code_challenge).
var pkceVerifier = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// s256 is the S256 code challenge of verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (s *Server) exchangeCode(ctx context.Context, client *store.Client, code, redirectURI, verifier string) (*api.Token, *tokenError) {
	if code == "" {
		return nil, badRequest(api.OAuthInvalidRequest, "code is required")
	}
	var tok *api.Token
	var te *tokenError
	err := s.db.WriteTx(ctx, func(q *store.Queries) error {
		c, err := q.GetAuthCode(ctx, hashSecret(code))
		if errors.Is(err, store.ErrNotFound) || (err == nil && c.ClientID != client.ID) {
			te = invalidGrant("the authorization code is not valid")
			return nil
		} else if err != nil {
			return err
		}
		if c.UsedAt != nil {
			return s.codeReused(ctx, q, client, c, &te)
		}
		// The checks come before the code is spent, so that a request that fails them
		// (a stolen code without its verifier, say) cannot use up the rightful holder's code.
		if !s.now().Before(c.ExpiresAt) {
			te = invalidGrant("the authorization code has expired")
			return nil
		}
		if c.RedirectURI != nil && *c.RedirectURI != redirectURI {
			te = invalidGrant("redirect_uri does not match the authorization request")
			return nil
		}
		switch {
		case c.CodeChallenge != "" && verifier == "":
			te = invalidGrant("code_verifier is required: the authorization request sent a code_challenge")
			return nil
		case c.CodeChallenge != "" && (!pkceVerifier.MatchString(verifier) || !hashesEqual(s256(verifier), c.CodeChallenge)):
			te = invalidGrant("code_verifier does not match the code_challenge")
			return nil
		case c.CodeChallenge == "" && verifier != "":
			te = invalidGrant("code_verifier sent, but the authorization request had no code_challenge")
			return nil
		}
		first, err := q.UseAuthCode(ctx, c.Hash, s.now())
		if err != nil {
			return err
		}
		if !first {
			return s.codeReused(ctx, q, client, c, &te)
		}
		tok, err = s.issue(ctx, q, client.ID, c.AccountID, c.Family, true)
		return err
	})
	if err != nil {
		return nil, serverError(err)
	}
	return tok, te
}

// codeReused ends what a code granted when it comes back after its exchange: it was likely
// stolen (RFC 6749 §4.1.2).
func (s *Server) codeReused(ctx context.Context, q *store.Queries, client *store.Client, c *store.AuthCode, te **tokenError) error {
	n, err := q.RevokeFamily(ctx, c.Family, s.now())
	if err != nil {
		return err
	}
	s.log.WarnContext(ctx, "authorization code reused; revoked the tokens issued from it",
		"client_id", client.ID, "revoked", n)
	*te = invalidGrant("the authorization code was already used; the tokens issued from it are revoked")
	return nil
}

func (s *Server) clientCredentials(ctx context.Context, client *store.Client) (*api.Token, *tokenError) {
	var tok *api.Token
	err := s.db.WriteTx(ctx, func(q *store.Queries) (err error) {
		tok, err = s.issue(ctx, q, client.ID, 0, newID("f_"), false)
		return err
	})
	if err != nil {
		return nil, serverError(err)
	}
	return tok, nil
}

func (s *Server) refresh(ctx context.Context, client *store.Client, refreshToken string) (*api.Token, *tokenError) {
	if refreshToken == "" {
		return nil, badRequest(api.OAuthInvalidRequest, "refresh_token is required")
	}
	var tok *api.Token
	var te *tokenError
	err := s.db.WriteTx(ctx, func(q *store.Queries) error {
		t, err := q.GetToken(ctx, hashSecret(refreshToken))
		if errors.Is(err, store.ErrNotFound) || (err == nil && (t.Kind != store.TokenRefresh || t.ClientID != client.ID)) {
			te = invalidGrant("the refresh token is not valid")
			return nil
		} else if err != nil {
			return err
		}
		if t.RevokedAt != nil {
			te = invalidGrant("the refresh token has been revoked")
			return nil
		}
		rotated := t.RotatedAt == nil
		if rotated {
			if rotated, err = q.RotateToken(ctx, t.Hash, s.now()); err != nil {
				return err
			}
		}
		if !rotated {
			// A rotated refresh token came back: one of its two holders is not its owner.
			n, err := q.RevokeFamily(ctx, t.Family, s.now())
			if err != nil {
				return err
			}
			s.log.WarnContext(ctx, "rotated refresh token reused; revoked its token family",
				"client_id", client.ID, "account_id", t.AccountID, "revoked", n)
			te = invalidGrant("the refresh token was already used; every token of this grant is revoked")
			return nil
		}
		if s.now().After(t.ExpiresAt) {
			te = invalidGrant("the refresh token has expired")
			return nil
		}
		tok, err = s.issue(ctx, q, client.ID, t.AccountID, t.Family, true)
		return err
	})
	if err != nil {
		return nil, serverError(err)
	}
	return tok, te
}

// issue stores and returns a new access token, with a refresh token when withRefresh.
func (s *Server) issue(ctx context.Context, q *store.Queries, clientID string, accountID int64, family string, withRefresh bool) (*api.Token, error) {
	now := s.now()
	access, accessHash := newSecret(prefixAccess)
	at := &store.Token{Hash: accessHash, Kind: store.TokenAccess, ClientID: clientID, AccountID: accountID,
		Family: family, ExpiresAt: now.Add(AccessTokenTTL)}
	if err := q.InsertToken(ctx, at); err != nil {
		return nil, err
	}
	tok := &api.Token{TokenType: "bearer", Mapi: clientID, AccessToken: access, ExpiresIn: int64(AccessTokenTTL.Seconds())}
	if withRefresh {
		refresh, refreshHash := newSecret(prefixRefresh)
		rt := &store.Token{Hash: refreshHash, Kind: store.TokenRefresh, ClientID: clientID, AccountID: accountID,
			Family: family, ExpiresAt: at.ExpiresAt.Add(RefreshTokenTTL)}
		if err := q.InsertToken(ctx, rt); err != nil {
			return nil, err
		}
		tok.RefreshToken = refresh
	}
	return tok, nil
}

// IssueAccountCode issues the code of an account-creation response: bound to the creating
// client and to no redirect URI, valid for CodeTTL, once.
func (s *Server) IssueAccountCode(ctx context.Context, q *store.Queries, clientID string, accountID int64) (string, error) {
	code, hash := newSecret(prefixCode)
	err := q.InsertAuthCode(ctx, &store.AuthCode{Hash: hash, ClientID: clientID, AccountID: accountID,
		Family: newID("f_"), ExpiresAt: s.now().Add(CodeTTL)})
	return code, err
}

// HandleRevoke serves POST /oauth/revoke (RFC 7009). Revoking either token of a grant
// revokes the whole grant, which is what logging out means. Unknown tokens are not an
// error: the caller's goal, a token that does not work, is met. Another client's token is.
func (s *Server) HandleRevoke(w http.ResponseWriter, r *http.Request) {
	if e := parseForm(w, r); e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	client, e := s.authenticateClient(r.Context(), r)
	if e != nil {
		s.writeTokenError(w, r, e)
		return
	}
	token := r.PostForm.Get("token")
	if token == "" {
		s.writeTokenError(w, r, badRequest(api.OAuthInvalidRequest, "token is required"))
		return
	}
	var te *tokenError
	err := s.db.WriteTx(r.Context(), func(q *store.Queries) error {
		t, err := q.GetToken(r.Context(), hashSecret(token))
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil
		case err != nil:
			return err
		case t.ClientID != client.ID:
			// RFC 7009 §2.1: a client may revoke only its own tokens.
			te = badRequest(api.OAuthUnauthorizedClient, "the token was not issued to this client")
			return nil
		}
		_, err = q.RevokeFamily(r.Context(), t.Family, s.now())
		return err
	})
	if err != nil {
		te = serverError(err)
	}
	if te != nil {
		s.writeTokenError(w, r, te)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// Metadata returns the RFC 8414 metadata document.
func (s *Server) Metadata() api.ServerMetadata {
	auth := []string{"client_secret_basic", "client_secret_post"}
	return api.ServerMetadata{
		Issuer:                            s.cfg.BaseURL,
		AuthorizationEndpoint:             s.cfg.AuthURL + PathAuthorize,
		TokenEndpoint:                     s.cfg.BaseURL + PathToken,
		RevocationEndpoint:                s.cfg.BaseURL + PathRevoke,
		ResponseTypesSupported:            []string{"code"},
		GrantTypesSupported:               []string{api.GrantAuthorizationCode, api.GrantClientCredentials, api.GrantRefreshToken},
		CodeChallengeMethodsSupported:     []string{"S256"},
		TokenEndpointAuthMethodsSupported: auth,
		RevocationEndpointAuthMethods:     auth,
	}
}

// HandleMetadata serves the metadata document.
func (s *Server) HandleMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_ = json.NewEncoder(w).Encode(s.Metadata())
}
