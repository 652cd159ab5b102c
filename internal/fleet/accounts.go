package fleet

import (
	"context"
	"fmt"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/password"
	"github.com/connected-vehicle/vcs/internal/store"
)

// ListAccounts returns the caller's page of accounts and how many it may see in all: its own
// account for a user token, the accounts its client created for a client token.
func (s *Service) ListAccounts(ctx context.Context, page store.Page) ([]api.Account, int, error) {
	c, err := callerFrom(ctx)
	if err != nil {
		return nil, 0, err
	}
	f := store.AccountFilter{Page: page}
	if c.IsClient() {
		f.CreatorClientID = c.ClientID
	} else {
		f.ID = c.AccountID
	}
	var rows []*store.Account
	var total int
	err = s.db.ReadTx(ctx, func(q *store.Queries) error {
		rows, total, err = q.ListAccounts(ctx, f)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]api.Account, len(rows))
	for i, a := range rows {
		out[i] = a.Account
	}
	return out, total, nil
}

// GetAccount returns the account with id when the caller may see it.
func (s *Service) GetAccount(ctx context.Context, id int64) (*api.Account, error) {
	a, err := s.findAccount(ctx, s.db.Read(), id)
	if err != nil {
		return nil, err
	}
	return &a.Account, nil
}

func (s *Service) findAccount(ctx context.Context, q *store.Queries, id int64) (*store.Account, error) {
	c, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	a, err := q.GetAccount(ctx, id)
	if err != nil {
		return nil, notFoundAs(err, "account")
	}
	if !canSeeAccount(c, a.ID, a.CreatorClientID) {
		return nil, api.NotFound("account")
	}
	return a, nil
}

// CreateAccount creates an account for the calling partner client. Only a client token may;
// the response carries an authorization code for the new account, bound to that client.
func (s *Service) CreateAccount(ctx context.Context, in api.AccountInput) (*api.Account, error) {
	c, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !c.IsClient() {
		return nil, api.Errorf(api.CodeForbidden,
			"accounts are created with a client token (grant_type=client_credentials), not a user's token")
	}
	if err := validateAccountInput(in, true).Err("account could not be created"); err != nil {
		return nil, err
	}
	a := &store.Account{CreatorClientID: c.ClientID}
	applyAccountInput(a, in)
	if a.PasswordHash, err = password.Hash(in.Password.Value, s.opts.PasswordCost); err != nil {
		return nil, err
	}
	var code string
	err = s.db.WriteTx(ctx, func(q *store.Queries) error {
		if err := s.checkUsername(ctx, q, a.Username, 0, "account could not be created"); err != nil {
			return err
		}
		if err := q.InsertAccount(ctx, a, s.now()); err != nil {
			return uniqueAs(q, err, "username", "account could not be created")
		}
		code, err = s.codes.IssueAccountCode(ctx, q, c.ClientID, a.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := a.Account
	out.AccessToken = &api.AccountCodeInfo{Code: code}
	return &out, nil
}

// UpdateAccount changes the members present in in; absent members stay as they are.
func (s *Service) UpdateAccount(ctx context.Context, id int64, in api.AccountInput) (*api.Account, error) {
	if err := validateAccountInput(in, false).Err("account could not be updated"); err != nil {
		return nil, err
	}
	var newHash string
	if in.Password.Present() {
		// Hashed outside the write transaction: bcrypt takes tens of milliseconds, and the
		// writer is shared.
		h, err := password.Hash(in.Password.Value, s.opts.PasswordCost)
		if err != nil {
			return nil, err
		}
		newHash = h
	}
	var out *api.Account
	err := s.db.WriteTx(ctx, func(q *store.Queries) error {
		a, err := s.findAccount(ctx, q, id)
		if err != nil {
			return err
		}
		applyAccountInput(a, in)
		if newHash != "" {
			a.PasswordHash = newHash
		}
		if in.Username.Present() {
			if err := s.checkUsername(ctx, q, a.Username, a.ID, "account could not be updated"); err != nil {
				return err
			}
		}
		if err := q.UpdateAccount(ctx, a); err != nil {
			return uniqueAs(q, err, "username", "account could not be updated")
		}
		out = &a.Account
		return nil
	})
	return out, err
}

// DeleteAccount removes the account and everything it owns, and so ends its tokens.
func (s *Service) DeleteAccount(ctx context.Context, id int64) error {
	return s.db.WriteTx(ctx, func(q *store.Queries) error {
		if _, err := s.findAccount(ctx, q, id); err != nil {
			return err
		}
		return q.DeleteAccount(ctx, id)
	})
}

func (s *Service) checkUsername(ctx context.Context, q *store.Queries, username string, exceptID int64, detail string) error {
	taken, err := q.UsernameTaken(ctx, username, exceptID)
	if err != nil {
		return err
	}
	if taken {
		return usernameTaken(username, detail)
	}
	return nil
}

func usernameTaken(username, detail string) error {
	var fe api.FieldErrors
	fe.Add("username", api.CodeUnique, "username %q is taken", username)
	return &api.Error{Code: api.CodeUnique, Detail: detail, FieldErrors: fe}
}

// uniqueAs turns a UNIQUE violation that a concurrent writer caused (on engines with more
// than one writer) into the same 409 that the explicit check gives.
func uniqueAs(q *store.Queries, err error, field, detail string) error {
	if !q.IsUniqueViolation(err) {
		return err
	}
	var fe api.FieldErrors
	fe.Add(field, api.CodeUnique, "%s is already in use", field)
	return &api.Error{Code: api.CodeUnique, Detail: detail, FieldErrors: fe}
}

// SeedAccount creates an account on behalf of creatorClientID without issuing a code, for
// the development seed. It bypasses the caller checks of CreateAccount.
func (s *Service) SeedAccount(ctx context.Context, creatorClientID string, in api.AccountInput) (*api.Account, error) {
	if err := validateAccountInput(in, true).Err("account could not be created"); err != nil {
		return nil, err
	}
	a := &store.Account{CreatorClientID: creatorClientID}
	applyAccountInput(a, in)
	hash, err := password.Hash(in.Password.Value, s.opts.PasswordCost)
	if err != nil {
		return nil, err
	}
	a.PasswordHash = hash
	err = s.db.WriteTx(ctx, func(q *store.Queries) error {
		if err := s.checkUsername(ctx, q, a.Username, 0, "account could not be created"); err != nil {
			return err
		}
		return q.InsertAccount(ctx, a, s.now())
	})
	if err != nil {
		return nil, fmt.Errorf("seed account %q: %w", a.Username, err)
	}
	return &a.Account, nil
}
