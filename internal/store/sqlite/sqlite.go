// Package sqlite opens the store on an embedded SQLite database file, with the pure-Go
// modernc.org/sqlite driver so that the binary builds without cgo.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/connected-vehicle/vcs/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Open opens (creating when needed) the database file at path and brings its schema up to
// date.
func Open(ctx context.Context, path string) (*store.DB, error) {
	// WAL lets readers work while the writer writes; busy_timeout covers writers in other
	// processes (the operator's "vcs server client" commands).
	pragmas := url.Values{"_pragma": {
		"journal_mode(WAL)",
		"busy_timeout(10000)",
		"foreign_keys(ON)",
		"synchronous(NORMAL)",
	}}
	dsn := func(extra url.Values) string {
		q := url.Values{}
		for k, v := range pragmas {
			q[k] = v
		}
		for k, v := range extra {
			q[k] = append(q[k], v...)
		}
		return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	}

	// One writer connection whose transactions take the write lock when they begin
	// (BEGIN IMMEDIATE): with deferred transactions, concurrent writers that read first fail
	// with SQLITE_BUSY instead of waiting.
	write, err := sql.Open("sqlite", dsn(url.Values{"_txlock": {"immediate"}}))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxIdleTime(0)
	write.SetConnMaxLifetime(0)

	read, err := sql.Open("sqlite", dsn(url.Values{"_pragma": {"query_only(ON)"}}))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	read.SetConnMaxIdleTime(0)
	read.SetConnMaxLifetime(0)

	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	db := store.New(read, write, store.Dialect{
		Name:              "sqlite",
		IsUniqueViolation: isUniqueViolation,
		Migrations:        sub,
	})
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) &&
		(se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}
