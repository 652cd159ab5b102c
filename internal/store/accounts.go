package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
)

// Account is an account row: the resource plus what only the service sees.
type Account struct {
	api.Account
	// CreatorClientID is the partner client that created the account; "" when an operator
	// or the development seed did, or when that client has been deleted.
	CreatorClientID string `json:"-"`
	PasswordHash    string `json:"-"`
}

// AccountFilter selects accounts. Zero members select everything.
type AccountFilter struct {
	ID              int64
	CreatorClientID string
	Page
}

const accountColumns = `id, creator_client_id, username, password_hash, first_name, last_name,
	zipcode, email, phone, time_zone, preferred_contact, created_at`

func scanAccount(s interface{ Scan(...any) error }) (*Account, error) {
	var (
		a               Account
		creator         sql.NullString
		email, phone    sql.NullString
		createdAtMillis int64
	)
	err := s.Scan(&a.ID, &creator, &a.Username, &a.PasswordHash, &a.FirstName, &a.LastName,
		&a.Zipcode, &email, &phone, &a.TimeZone, &a.PreferredContact, &createdAtMillis)
	if err != nil {
		return nil, err
	}
	a.CreatorClientID = creator.String
	a.Email, a.Phone = fromNullString(email), fromNullString(phone)
	a.DateCreated = api.NewDateTime(fromMillis(createdAtMillis))
	return &a, nil
}

// usernameKey is the form in which usernames are unique: "Alice" and "alice" are one name.
func usernameKey(username string) string { return strings.ToLower(username) }

// InsertAccount stores a and sets its ID and DateCreated.
func (q *Queries) InsertAccount(ctx context.Context, a *Account, now time.Time) error {
	var creator sql.NullString
	if a.CreatorClientID != "" {
		creator = sql.NullString{String: a.CreatorClientID, Valid: true}
	}
	err := q.row(ctx, `INSERT INTO accounts (creator_client_id, username, username_key, password_hash,
		first_name, last_name, zipcode, email, phone, time_zone, preferred_contact, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		creator, a.Username, usernameKey(a.Username), a.PasswordHash, a.FirstName, a.LastName,
		a.Zipcode, nullString(a.Email), nullString(a.Phone), a.TimeZone, a.PreferredContact, millis(now),
	).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("insert account: %w", err)
	}
	a.DateCreated = api.NewDateTime(now)
	return nil
}

// GetAccount returns the account with id.
func (q *Queries) GetAccount(ctx context.Context, id int64) (*Account, error) {
	a, err := scanAccount(q.row(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("get account %d: %w", id, notFound(err))
	}
	return a, nil
}

// GetAccountByUsername returns the account whose username matches, ignoring case.
func (q *Queries) GetAccountByUsername(ctx context.Context, username string) (*Account, error) {
	a, err := scanAccount(q.row(ctx, `SELECT `+accountColumns+` FROM accounts WHERE username_key = ?`, usernameKey(username)))
	if err != nil {
		return nil, fmt.Errorf("get account by username: %w", notFound(err))
	}
	return a, nil
}

// UsernameTaken reports whether an account other than exceptID holds username.
func (q *Queries) UsernameTaken(ctx context.Context, username string, exceptID int64) (bool, error) {
	var n int
	err := q.row(ctx, `SELECT COUNT(*) FROM accounts WHERE username_key = ? AND id <> ?`, usernameKey(username), exceptID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("check username: %w", err)
	}
	return n > 0, nil
}

// ListAccounts returns one page of the accounts that f selects, in id order, and how many
// there are in all.
func (q *Queries) ListAccounts(ctx context.Context, f AccountFilter) ([]*Account, int, error) {
	where, args := accountWhere(f)
	var total int
	if err := q.row(ctx, `SELECT COUNT(*) FROM accounts`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count accounts: %w", err)
	}
	rows, err := q.rows(ctx, `SELECT `+accountColumns+` FROM accounts`+where+` ORDER BY id LIMIT ? OFFSET ?`,
		append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	var out []*Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list accounts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list accounts: %w", err)
	}
	return out, total, nil
}

func accountWhere(f AccountFilter) (string, []any) {
	var conds []string
	var args []any
	if f.ID != 0 {
		conds = append(conds, "id = ?")
		args = append(args, f.ID)
	}
	if f.CreatorClientID != "" {
		conds = append(conds, "creator_client_id = ?")
		args = append(args, f.CreatorClientID)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// UpdateAccount writes every mutable member of a.
func (q *Queries) UpdateAccount(ctx context.Context, a *Account) error {
	err := q.exec(ctx, `UPDATE accounts SET username = ?, username_key = ?, password_hash = ?,
		first_name = ?, last_name = ?, zipcode = ?, email = ?, phone = ?, time_zone = ?,
		preferred_contact = ? WHERE id = ?`,
		a.Username, usernameKey(a.Username), a.PasswordHash, a.FirstName, a.LastName, a.Zipcode,
		nullString(a.Email), nullString(a.Phone), a.TimeZone, a.PreferredContact, a.ID)
	if err != nil {
		return fmt.Errorf("update account %d: %w", a.ID, err)
	}
	return nil
}

// DeleteAccount removes the account; its vehicles, tokens, codes and everything that hangs
// off them go with it (ON DELETE CASCADE).
func (q *Queries) DeleteAccount(ctx context.Context, id int64) error {
	n, err := q.execN(ctx, `DELETE FROM accounts WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete account %d: %w", id, err)
	}
	q.endedTokens = true
	if n == 0 {
		return fmt.Errorf("delete account %d: %w", id, ErrNotFound)
	}
	return nil
}
