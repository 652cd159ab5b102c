package store

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// maxGroup bounds how many write transactions one commit carries.
const maxGroup = 128

// writeReq is a write transaction waiting for the writer.
type writeReq struct {
	ctx  context.Context
	fn   func(*Queries) error
	done chan error
}

// writer runs write transactions one at a time, and commits those that queue up while one
// runs together (group commit): on a single-writer engine the commit is what costs, and
// callers that arrive together then share one. Each transaction of a group runs inside its
// own savepoint, so that one that fails leaves the others whole.
type writer struct {
	db   *DB
	reqs chan *writeReq
	wg   sync.WaitGroup
	stop sync.Once
}

func newWriter(db *DB) *writer {
	w := &writer{db: db, reqs: make(chan *writeReq, maxGroup)}
	w.wg.Add(1)
	go w.run()
	return w
}

// close stops the writer once the transactions already queued have run.
func (w *writer) close() {
	w.stop.Do(func() { close(w.reqs) })
	w.wg.Wait()
}

// do runs fn in a write transaction and returns its outcome. fn must not call WriteTx:
// it runs on the writer, which would wait for itself.
func (w *writer) do(ctx context.Context, fn func(*Queries) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	w.reqs <- req
	return <-req.done
}

func (w *writer) run() {
	defer w.wg.Done()
	group := make([]*writeReq, 0, maxGroup)
	for first := range w.reqs {
		group = append(group[:0], first)
	more:
		for len(group) < maxGroup {
			select {
			case r, ok := <-w.reqs:
				if !ok {
					break more
				}
				group = append(group, r)
			default:
				break more
			}
		}
		w.commit(group)
	}
}

// commit runs a group in one transaction and tells each caller its outcome.
func (w *writer) commit(group []*writeReq) {
	db := w.db
	errs := make([]error, len(group))
	queries := make([]*Queries, len(group))
	tx, err := db.write.db.BeginTx(context.Background(), nil)
	if err != nil {
		for _, r := range group {
			r.done <- fmt.Errorf("begin transaction: %w", err)
		}
		return
	}
	single := len(group) == 1
	for i, r := range group {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		// The savepoint statements go through q too, so that they are prepared once.
		q := &Queries{stmts: db.write, tx: tx, d: &db.dialect}
		bg := context.Background()
		if !single {
			if err := q.exec(r.ctx, "SAVEPOINT w"); err != nil {
				errs[i] = fmt.Errorf("savepoint: %w", err)
				continue
			}
		}
		err := runFn(r.fn, q)
		switch {
		case err != nil && single:
		case err != nil:
			// Undo this transaction's writes only; the group goes on.
			if rerr := q.exec(bg, "ROLLBACK TO SAVEPOINT w"); rerr != nil {
				err = errors.Join(err, rerr)
			}
			_ = q.exec(bg, "RELEASE SAVEPOINT w")
		default:
			if !single {
				if rerr := q.exec(bg, "RELEASE SAVEPOINT w"); rerr != nil {
					err = fmt.Errorf("release savepoint: %w", rerr)
				}
			}
		}
		errs[i], queries[i] = err, q
	}
	if single && errs[0] != nil {
		_ = tx.Rollback()
		group[0].done <- errs[0]
		return
	}
	if err := tx.Commit(); err != nil {
		for i, r := range group {
			r.done <- errors.Join(errs[i], fmt.Errorf("commit transaction: %w", err))
		}
		return
	}
	ended := false
	var unprepared []string
	for i, q := range queries {
		if q != nil && errs[i] == nil {
			ended = ended || q.endedTokens
			unprepared = append(unprepared, q.unprepared...)
		}
	}
	if ended {
		// After the commit, so that a lookup racing with this transaction cannot cache the
		// old row under the new generation.
		db.tokenGen.Add(1)
	}
	// Statements the group had to run unprepared are prepared now that the connection is
	// free, so that later transactions find them.
	for _, query := range unprepared {
		_, _ = db.write.get(context.Background(), query, true)
	}
	for i, r := range group {
		r.done <- errs[i]
	}
}

// runFn runs fn, turning a panic into an error: the writer serves everyone and must not die.
func runFn(fn func(*Queries) error, q *Queries) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic in write transaction: %v\n%s", v, debug.Stack())
		}
	}()
	return fn(q)
}
