// Package store keeps the service's state in a SQL database. Its queries are written once,
// in the SQL that SQLite and PostgreSQL share; an engine package (store/sqlite, ...) opens
// the database and supplies a Dialect for the few places where the engines differ.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// Dialect is what differs between engines.
type Dialect struct {
	// Name names the engine in errors and logs.
	Name string
	// Rebind rewrites a query's "?" placeholders into the engine's form; nil keeps them.
	Rebind func(query string) string
	// IsUniqueViolation reports an error caused by a UNIQUE constraint.
	IsUniqueViolation func(err error) bool
	// Migrations holds the engine's schema as numbered files: 0001_init.sql, 0002_....sql.
	Migrations fs.FS
}

// DB is the store. Reads go to a pool of readers; writes go through one writer so that
// engines with a single-writer lock (SQLite) never fail a write with "database is busy".
type DB struct {
	read    *stmtCache
	write   *stmtCache
	writer  *writer
	dialect Dialect
	// tokenGen counts committed transactions that revoked or deleted tokens; see
	// TokenGeneration.
	tokenGen atomic.Uint64
}

// TokenGeneration changes after every committed write that may have ended tokens
// (revocation, deleted accounts and clients). A cache of token lookups that saw the same
// generation before and after its lookup is still valid for this process's writes.
func (db *DB) TokenGeneration() uint64 { return db.tokenGen.Load() }

// New returns a store over the given pools; read and write may be the same pool.
func New(read, write *sql.DB, d Dialect) *DB {
	r, w := newStmtCache(read), newStmtCache(write)
	if read == write {
		r = w
	}
	db := &DB{read: r, write: w, dialect: d}
	db.writer = newWriter(db)
	return db
}

// stmtCache keeps one prepared statement per query text on a pool. Parsing SQL is most of
// the cost of a small query; the store's query texts are a small fixed set.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// get returns the statement for query, preparing it when prepare is set and it is not
// cached yet; nil when it is not cached and prepare is not set.
func (c *stmtCache) get(ctx context.Context, query string, prepare bool) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.m[query]
	c.mu.Unlock()
	if ok || !prepare {
		return st, nil
	}
	// Prepared without the lock: preparing waits for a connection, and a transaction that
	// holds one may need the lock to look up its own statements.
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok {
		st.Close()
		return prev, nil
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	c.m = nil
	return errors.Join(append(errs, c.db.Close())...)
}

// Close finishes the writes under way and closes both pools.
func (db *DB) Close() error {
	db.writer.close()
	err := db.write.close()
	if db.read != db.write {
		err = errors.Join(err, db.read.close())
	}
	return err
}

// Read returns queries that run on the reader pool, each on its own.
func (db *DB) Read() *Queries { return &Queries{stmts: db.read, d: &db.dialect} }

// ReadTx runs fn in a read transaction, for reads that must agree with each other.
func (db *DB) ReadTx(ctx context.Context, fn func(*Queries) error) error {
	return db.readTx(ctx, db.read, &sql.TxOptions{ReadOnly: true}, fn)
}

// WriteTx runs fn in a write transaction: all of fn's writes happen, or none. Writes that
// arrive together may share one commit (see writer); fn must not call WriteTx itself.
func (db *DB) WriteTx(ctx context.Context, fn func(*Queries) error) error {
	return db.writer.do(ctx, fn)
}

// readTx runs fn in a read-only transaction on pool.
func (db *DB) readTx(ctx context.Context, pool *stmtCache, opts *sql.TxOptions, fn func(*Queries) error) error {
	tx, err := pool.db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := fn(&Queries{stmts: pool, tx: tx, d: &db.dialect}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// Migrate applies the dialect's migrations that the database has not seen, each in its own
// transaction, in the order of their numbers.
func (db *DB) Migrate(ctx context.Context) error {
	if _, err := db.write.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	entries, err := fs.ReadDir(db.dialect.Migrations, ".")
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	type migration struct {
		version int
		name    string
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("migration %s: name must start with its number", e.Name())
		}
		ms = append(ms, migration{v, e.Name()})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for _, m := range ms {
		err := db.WriteTx(ctx, func(q *Queries) error {
			var n int
			if err := q.row(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			body, err := fs.ReadFile(db.dialect.Migrations, m.name)
			if err != nil {
				return err
			}
			if _, err := q.tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			return q.exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, m.version, time.Now().UnixMilli())
		})
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", m.name, err)
		}
	}
	return nil
}

// Queries runs the store's queries on a pool, or inside a transaction when tx is set.
type Queries struct {
	stmts *stmtCache
	tx    *sql.Tx
	d     *Dialect
	// endedTokens is set by writes that revoke or delete tokens.
	endedTokens bool
	// unprepared are the query texts this transaction ran without a cached statement.
	unprepared []string
}

// querier is what a statement, a pool and a transaction can all do.
type querier interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
}

// txQuery runs one query text on a transaction without a prepared statement.
type txQuery struct {
	tx    *sql.Tx
	query string
}

func (t txQuery) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.query, args...)
}

func (t txQuery) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.query, args...)
}

func (t txQuery) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.query, args...)
}

// stmt returns how to run query: a cached prepared statement, bound to the transaction when
// there is one. Inside a transaction a statement is never prepared on the pool: that would
// wait for a connection while holding one, and the writer pool has only one.
func (q *Queries) stmt(ctx context.Context, query string) (querier, error) {
	if q.d.Rebind != nil {
		query = q.d.Rebind(query)
	}
	st, err := q.stmts.get(ctx, query, q.tx == nil)
	switch {
	case err != nil:
		return nil, fmt.Errorf("prepare: %w", err)
	case q.tx == nil:
		return st, nil
	case st != nil:
		return q.tx.StmtContext(ctx, st), nil
	default:
		q.unprepared = append(q.unprepared, query)
		return txQuery{q.tx, query}, nil
	}
}

func (q *Queries) exec(ctx context.Context, query string, args ...any) error {
	_, err := q.execN(ctx, query, args...)
	return err
}

// execN runs a statement and returns how many rows it changed.
func (q *Queries) execN(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// scanner is a row that may have failed before it could be scanned.
type scanner interface{ Scan(...any) error }

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (q *Queries) row(ctx context.Context, query string, args ...any) scanner {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

func (q *Queries) rows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// IsUniqueViolation reports an error caused by a UNIQUE constraint.
func (q *Queries) IsUniqueViolation(err error) bool {
	return err != nil && q.d.IsUniqueViolation != nil && q.d.IsUniqueViolation(err)
}

// notFound turns sql.ErrNoRows into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// Page selects a window of a list.
type Page struct {
	Offset int
	Limit  int
}

// Time conversions: columns hold Unix milliseconds.

func millis(t time.Time) int64 { return t.UnixMilli() }

func nullMillis(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func fromNullMillis(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMillis(n.Int64)
	return &t
}

func nullString(s *string) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}

func fromNullString(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	s := n.String
	return &s
}
