package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Client is a registered partner client. Only the hash of its secret is kept.
type Client struct {
	ID           string
	Name         string
	SecretHash   string
	RedirectURIs []string
	CreatedAt    time.Time
}

// InsertClient stores c.
func (q *Queries) InsertClient(ctx context.Context, c *Client) error {
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return fmt.Errorf("insert client: %w", err)
	}
	err = q.exec(ctx, `INSERT INTO clients (id, name, secret_hash, redirect_uris, created_at) VALUES (?, ?, ?, ?, ?)`,
		c.ID, c.Name, c.SecretHash, string(uris), millis(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert client %s: %w", c.ID, err)
	}
	return nil
}

func scanClient(s interface{ Scan(...any) error }) (*Client, error) {
	var c Client
	var uris string
	var created int64
	if err := s.Scan(&c.ID, &c.Name, &c.SecretHash, &uris, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return nil, fmt.Errorf("client %s redirect URIs: %w", c.ID, err)
	}
	c.CreatedAt = fromMillis(created)
	return &c, nil
}

// GetClient returns the client with id.
func (q *Queries) GetClient(ctx context.Context, id string) (*Client, error) {
	c, err := scanClient(q.row(ctx, `SELECT id, name, secret_hash, redirect_uris, created_at FROM clients WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("get client: %w", notFound(err))
	}
	return c, nil
}

// ListClients returns every client, oldest first.
func (q *Queries) ListClients(ctx context.Context) ([]*Client, error) {
	rows, err := q.rows(ctx, `SELECT id, name, secret_hash, redirect_uris, created_at FROM clients ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	defer rows.Close()
	var out []*Client
	for rows.Next() {
		c, err := scanClient(rows)
		if err != nil {
			return nil, fmt.Errorf("list clients: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DeleteClient removes the client with its tokens, codes and login sessions. Accounts it
// created stay, with no creator.
func (q *Queries) DeleteClient(ctx context.Context, id string) error {
	n, err := q.execN(ctx, `DELETE FROM clients WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete client %s: %w", id, err)
	}
	q.endedTokens = true
	if n == 0 {
		return fmt.Errorf("delete client %s: %w", id, ErrNotFound)
	}
	return nil
}

// AuthCode is an issued authorization code, kept by its hash.
type AuthCode struct {
	Hash      string
	ClientID  string
	AccountID int64
	// RedirectURI is the redirect_uri of the authorize request; nil for the code of an
	// account-creation response, which is bound to no redirect URI.
	RedirectURI   *string
	CodeChallenge string // PKCE S256 challenge; "" when none was sent
	Family        string // the token family that exchanging the code starts
	ExpiresAt     time.Time
	UsedAt        *time.Time
}

// InsertAuthCode stores c.
func (q *Queries) InsertAuthCode(ctx context.Context, c *AuthCode) error {
	var challenge sql.NullString
	if c.CodeChallenge != "" {
		challenge = sql.NullString{String: c.CodeChallenge, Valid: true}
	}
	err := q.exec(ctx, `INSERT INTO auth_codes (hash, client_id, account_id, redirect_uri, code_challenge, family, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.Hash, c.ClientID, c.AccountID, nullString(c.RedirectURI), challenge, c.Family, millis(c.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert authorization code: %w", err)
	}
	return nil
}

// GetAuthCode returns the code whose hash is hash.
func (q *Queries) GetAuthCode(ctx context.Context, hash string) (*AuthCode, error) {
	var (
		c               AuthCode
		redirect, chall sql.NullString
		expires         int64
		used            sql.NullInt64
	)
	err := q.row(ctx, `SELECT hash, client_id, account_id, redirect_uri, code_challenge, family, expires_at, used_at
		FROM auth_codes WHERE hash = ?`, hash).
		Scan(&c.Hash, &c.ClientID, &c.AccountID, &redirect, &chall, &c.Family, &expires, &used)
	if err != nil {
		return nil, fmt.Errorf("get authorization code: %w", notFound(err))
	}
	c.RedirectURI = fromNullString(redirect)
	c.CodeChallenge = chall.String
	c.ExpiresAt = fromMillis(expires)
	c.UsedAt = fromNullMillis(used)
	return &c, nil
}

// UseAuthCode marks the code used and reports whether this call was the first to do so.
func (q *Queries) UseAuthCode(ctx context.Context, hash string, now time.Time) (bool, error) {
	n, err := q.execN(ctx, `UPDATE auth_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL`, millis(now), hash)
	if err != nil {
		return false, fmt.Errorf("use authorization code: %w", err)
	}
	return n == 1, nil
}

// Token kinds.
const (
	TokenAccess  = "access"
	TokenRefresh = "refresh"
)

// Token is an issued access or refresh token, kept by its hash.
type Token struct {
	Hash      string
	Kind      string
	ClientID  string
	AccountID int64 // 0 for a client token
	Family    string
	ExpiresAt time.Time
	RevokedAt *time.Time
	RotatedAt *time.Time
}

// InsertToken stores t.
func (q *Queries) InsertToken(ctx context.Context, t *Token) error {
	var account sql.NullInt64
	if t.AccountID != 0 {
		account = sql.NullInt64{Int64: t.AccountID, Valid: true}
	}
	err := q.exec(ctx, `INSERT INTO tokens (hash, kind, client_id, account_id, family, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.Hash, t.Kind, t.ClientID, account, t.Family, millis(t.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert %s token: %w", t.Kind, err)
	}
	return nil
}

// GetToken returns the token whose hash is hash.
func (q *Queries) GetToken(ctx context.Context, hash string) (*Token, error) {
	var (
		t                Token
		account          sql.NullInt64
		expires          int64
		revoked, rotated sql.NullInt64
	)
	err := q.row(ctx, `SELECT hash, kind, client_id, account_id, family, expires_at, revoked_at, rotated_at
		FROM tokens WHERE hash = ?`, hash).
		Scan(&t.Hash, &t.Kind, &t.ClientID, &account, &t.Family, &expires, &revoked, &rotated)
	if err != nil {
		return nil, fmt.Errorf("get token: %w", notFound(err))
	}
	t.AccountID = account.Int64
	t.ExpiresAt = fromMillis(expires)
	t.RevokedAt, t.RotatedAt = fromNullMillis(revoked), fromNullMillis(rotated)
	return &t, nil
}

// RotateToken marks a refresh token exchanged and reports whether this call was the first
// to do so.
func (q *Queries) RotateToken(ctx context.Context, hash string, now time.Time) (bool, error) {
	n, err := q.execN(ctx, `UPDATE tokens SET rotated_at = ? WHERE hash = ? AND rotated_at IS NULL AND revoked_at IS NULL`,
		millis(now), hash)
	if err != nil {
		return false, fmt.Errorf("rotate refresh token: %w", err)
	}
	return n == 1, nil
}

// RevokeFamily revokes every token descended from one grant and returns how many it revoked.
func (q *Queries) RevokeFamily(ctx context.Context, family string, now time.Time) (int64, error) {
	n, err := q.execN(ctx, `UPDATE tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL`, millis(now), family)
	if err != nil {
		return 0, fmt.Errorf("revoke token family: %w", err)
	}
	q.endedTokens = true
	return n, nil
}

// LoginSession is an authorize request waiting for its user to log in. The browser holds
// the session id in a cookie; the row holds its hash.
type LoginSession struct {
	Hash          string
	ClientID      string
	RedirectURI   string
	State         string
	CodeChallenge string
	CSRFHash      string
	ExpiresAt     time.Time
}

// InsertLoginSession stores s.
func (q *Queries) InsertLoginSession(ctx context.Context, s *LoginSession) error {
	var challenge sql.NullString
	if s.CodeChallenge != "" {
		challenge = sql.NullString{String: s.CodeChallenge, Valid: true}
	}
	err := q.exec(ctx, `INSERT INTO login_sessions (hash, client_id, redirect_uri, state, code_challenge, csrf_hash, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.Hash, s.ClientID, s.RedirectURI, s.State, challenge, s.CSRFHash, millis(s.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert login session: %w", err)
	}
	return nil
}

// GetLoginSession returns the session whose hash is hash.
func (q *Queries) GetLoginSession(ctx context.Context, hash string) (*LoginSession, error) {
	var s LoginSession
	var challenge sql.NullString
	var expires int64
	err := q.row(ctx, `SELECT hash, client_id, redirect_uri, state, code_challenge, csrf_hash, expires_at
		FROM login_sessions WHERE hash = ?`, hash).
		Scan(&s.Hash, &s.ClientID, &s.RedirectURI, &s.State, &challenge, &s.CSRFHash, &expires)
	if err != nil {
		return nil, fmt.Errorf("get login session: %w", notFound(err))
	}
	s.CodeChallenge = challenge.String
	s.ExpiresAt = fromMillis(expires)
	return &s, nil
}

// SetLoginSessionCSRF replaces the session's CSRF token hash.
func (q *Queries) SetLoginSessionCSRF(ctx context.Context, hash, csrfHash string) error {
	if err := q.exec(ctx, `UPDATE login_sessions SET csrf_hash = ? WHERE hash = ?`, csrfHash, hash); err != nil {
		return fmt.Errorf("update login session: %w", err)
	}
	return nil
}

// DeleteLoginSession removes the session; a missing one is not an error.
func (q *Queries) DeleteLoginSession(ctx context.Context, hash string) error {
	if err := q.exec(ctx, `DELETE FROM login_sessions WHERE hash = ?`, hash); err != nil {
		return fmt.Errorf("delete login session: %w", err)
	}
	return nil
}

// DeleteExpired removes login sessions and codes past their expiry and tokens that expired
// before tokensBefore (kept until then so that their holders hear "expired", not "unknown").
func (q *Queries) DeleteExpired(ctx context.Context, now, tokensBefore time.Time) (int64, error) {
	var total int64
	for _, stmt := range []struct {
		query string
		at    time.Time
	}{
		{`DELETE FROM login_sessions WHERE expires_at < ?`, now},
		{`DELETE FROM auth_codes WHERE expires_at < ?`, now},
		{`DELETE FROM tokens WHERE expires_at < ?`, tokensBefore},
	} {
		n, err := q.execN(ctx, stmt.query, millis(stmt.at))
		if err != nil {
			return total, fmt.Errorf("delete expired: %w", err)
		}
		total += n
	}
	return total, nil
}
