// Package oauth is the service's OAuth 2.0 authorization server (RFC 6749) and the check of
// the bearer tokens it issues (RFC 6750): partner clients, the authorize endpoint and login
// page, the token endpoint with the authorization_code (with PKCE, RFC 7636),
// client_credentials and refresh_token grants, revocation (RFC 7009) and server metadata
// (RFC 8414). Design notes are in docs/oauth.md.
package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"strings"
	"time"

	"github.com/connected-vehicle/vcs/internal/store"
)

// Paths of the endpoints, relative to the base URL (token, revoke, metadata) or to the auth
// URL (authorize, login).
const (
	PathAuthorize = "/OAuth/authorize"
	PathLogin     = "/OAuth/login"
	PathToken     = "/oauth/token"
	PathRevoke    = "/oauth/revoke"
	PathMetadata  = "/.well-known/oauth-authorization-server"
)

// Lifetimes the SPEC fixes.
const (
	AccessTokenTTL = 24 * time.Hour
	// RefreshTokenTTL runs past the access token's expiry.
	RefreshTokenTTL = 30 * 24 * time.Hour
	CodeTTL         = 10 * time.Minute
	LoginTTL        = 15 * time.Minute
)

// Config configures a Server.
type Config struct {
	// BaseURL is the public address of the data API and token endpoint; it is the issuer.
	BaseURL string
	// AuthURL is the public address of the authorize endpoint and login page.
	AuthURL string
	Logger  *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// LoginLimits bounds failed logins; zero members take the defaults.
	LoginLimits LoginLimits
}

// Server is the authorization server.
type Server struct {
	db      *store.DB
	cfg     Config
	log     *slog.Logger
	limiter *loginLimiter
	tokens  tokenCache
}

// New returns a Server over db.
func New(db *store.DB, cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	cfg.AuthURL = strings.TrimSuffix(cfg.AuthURL, "/")
	return &Server{db: db, cfg: cfg, log: cfg.Logger, limiter: newLoginLimiter(cfg.LoginLimits)}
}

func (s *Server) now() time.Time { return s.cfg.Now().UTC() }

// Prefixes of the secrets the server hands out; they tell a leaked string's kind at a
// glance and let secret scanners find them.
const (
	prefixAccess  = "vcsa_"
	prefixRefresh = "vcsr_"
	prefixCode    = "vcsc_"
	prefixSecret  = "vcss_"
)

// newSecret returns a random secret with 256 bits of entropy and the hash under which it
// is stored.
func newSecret(prefix string) (plain, hash string) {
	plain = prefix + base64.RawURLEncoding.EncodeToString(randomBytes(32))
	return plain, hashSecret(plain)
}

// hashSecret is how every token, code, session id and client secret is stored. They carry
// 256 bits of entropy, so a fast hash is enough; passwords, which do not, use bcrypt.
func hashSecret(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// hashesEqual compares two hashes in constant time.
func hashesEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// newID returns a random identifier that is not a secret (client ids, token families).
func newID(prefix string) string {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	return prefix + strings.ToLower(enc.EncodeToString(randomBytes(10)))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	// crypto/rand.Read never fails on supported platforms (Go 1.24+); it crashes the
	// program rather than return predictable bytes.
	_, _ = rand.Read(b)
	return b
}
