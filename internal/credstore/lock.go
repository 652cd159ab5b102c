package credstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"
)

// Lock takes an exclusive lock on <Dir>/<profile>.lock, shared by every process and
// every Store, polling until it is free or ctx ends. It serializes token refresh:
//
//	unlock, err := store.Lock(ctx, profile)
//	// re-read the token set; refresh only if it is still expired; store it
//	unlock()
//
// The lock is held through an open file descriptor, so it is released if the
// process dies. Two Lock calls in one process exclude each other too. The lock file
// is left in place (removing it would let a third process lock a different inode).
// unlock may be called more than once.
func (s *Store) Lock(ctx context.Context, profile string) (unlock func(), err error) {
	if !nameRE.MatchString(profile) {
		return nil, fmt.Errorf("credstore: invalid profile name %q", profile)
	}
	if s.dir == "" {
		return nil, errors.New("credstore: no config directory for the lock file")
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("credstore: %w", err)
	}
	path := filepath.Join(s.dir, profile+".lock")
	fl := flock.New(path)
	ok, err := fl.TryLockContext(ctx, lockPoll)
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("credstore: waiting for %s: %w", path, err)
	}
	var once sync.Once
	return func() { once.Do(func() { _ = fl.Unlock() }) }, nil
}
