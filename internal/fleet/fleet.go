// Package fleet is the accounts-and-vehicles service: the rules of the seed's Account and
// Vehicle resources, and who may see and change which of them. Every operation reads the
// caller from its context (package auth), so that no handler can forget to check access.
package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/auth"
	"github.com/connected-vehicle/vcs/internal/store"
)

// CodeIssuer issues the authorization code that comes back with a new account, inside the
// transaction that creates the account.
type CodeIssuer interface {
	IssueAccountCode(ctx context.Context, q *store.Queries, clientID string, accountID int64) (string, error)
}

// Options tune a Service.
type Options struct {
	// PasswordCost is the bcrypt cost of new password hashes; 0 means the default.
	PasswordCost int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Service carries out account and vehicle operations for the caller in the context.
type Service struct {
	db    *store.DB
	codes CodeIssuer
	opts  Options
}

// New returns a Service over db.
func New(db *store.DB, codes CodeIssuer, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{db: db, codes: codes, opts: opts}
}

func (s *Service) now() time.Time { return s.opts.Now().UTC() }

// callerFrom returns the authenticated caller; operations are never reached without one,
// so its absence is a programming error reported as 401 rather than a panic.
func callerFrom(ctx context.Context) (auth.Caller, error) {
	c, ok := auth.CallerFrom(ctx)
	if !ok {
		return auth.Caller{}, api.Errorf(api.CodeUnauthorized, "authentication required")
	}
	return c, nil
}

// canSeeAccount reports whether c may read and change the account: its own, or one that c's
// client created when c is a client token.
func canSeeAccount(c auth.Caller, accountID int64, creatorClientID string) bool {
	if c.IsClient() {
		return creatorClientID != "" && creatorClientID == c.ClientID
	}
	return c.AccountID == accountID
}

// notFoundAs maps store.ErrNotFound to the API's 404 for kind; other errors pass through.
func notFoundAs(err error, kind string) error {
	if errors.Is(err, store.ErrNotFound) {
		return api.NotFound(kind)
	}
	return err
}
