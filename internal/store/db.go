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
	read    *sql.DB
	write   *sql.DB
	dialect Dialect
}

// New returns a store over the given pools; read and write may be the same pool.
func New(read, write *sql.DB, d Dialect) *DB {
	return &DB{read: read, write: write, dialect: d}
}

// Close closes both pools.
func (db *DB) Close() error {
	err := db.write.Close()
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// Read returns queries that run on the reader pool, each on its own.
func (db *DB) Read() *Queries { return &Queries{q: db.read, d: &db.dialect} }

// ReadTx runs fn in a read transaction, for reads that must agree with each other.
func (db *DB) ReadTx(ctx context.Context, fn func(*Queries) error) error {
	return db.inTx(ctx, db.read, &sql.TxOptions{ReadOnly: true}, fn)
}

// WriteTx runs fn in a write transaction: all of fn's writes happen, or none.
func (db *DB) WriteTx(ctx context.Context, fn func(*Queries) error) error {
	return db.inTx(ctx, db.write, nil, fn)
}

func (db *DB) inTx(ctx context.Context, pool *sql.DB, opts *sql.TxOptions, fn func(*Queries) error) error {
	tx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := fn(&Queries{q: tx, d: &db.dialect}); err != nil {
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
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
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
			if _, err := q.q.ExecContext(ctx, string(body)); err != nil {
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

// querier is what both a pool and a transaction can do.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Queries runs the store's queries on a pool or inside a transaction.
type Queries struct {
	q querier
	d *Dialect
}

func (q *Queries) bind(query string) string {
	if q.d.Rebind == nil {
		return query
	}
	return q.d.Rebind(query)
}

func (q *Queries) exec(ctx context.Context, query string, args ...any) error {
	_, err := q.q.ExecContext(ctx, q.bind(query), args...)
	return err
}

// execN runs a statement and returns how many rows it changed.
func (q *Queries) execN(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.q.ExecContext(ctx, q.bind(query), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q *Queries) row(ctx context.Context, query string, args ...any) *sql.Row {
	return q.q.QueryRowContext(ctx, q.bind(query), args...)
}

func (q *Queries) rows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.q.QueryContext(ctx, q.bind(query), args...)
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
