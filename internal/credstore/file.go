package credstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// fileData is the format of credentials.json:
// {"profiles": {"<profile>": {"<key>": "<value>"}}}.
type fileData struct {
	Profiles map[string]map[string]string `json:"profiles"`
}

// fileLockName is the lock serializing credentials.json updates across processes.
// Profile names cannot start with '.', so it cannot clash with a profile's lock.
const fileLockName = ".credentials.lock"

// lockPoll is how often a waiting file lock is retried.
const lockPoll = 10 * time.Millisecond

func (s *Store) filePath() string { return filepath.Join(s.dir, FileName) }

func (s *Store) needDir() error {
	if s.dir == "" {
		return errors.New("credstore: no config directory to store credentials in")
	}
	return nil
}

// readFile returns the file's contents; a missing file reads as empty.
func (s *Store) readFile() (*fileData, error) {
	d := &fileData{Profiles: map[string]map[string]string{}}
	if s.dir == "" {
		return d, nil
	}
	b, err := os.ReadFile(s.filePath())
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credstore: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return d, nil
	}
	if err := json.Unmarshal(b, d); err != nil {
		// Not %v: a syntax error quotes the offending character, which may be part of
		// a secret.
		where := ""
		if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
			where = fmt.Sprintf(" (at byte %d)", se.Offset)
		}
		return nil, fmt.Errorf("credstore: %s is not a valid credentials file%s; fix or delete it", s.filePath(), where)
	}
	if d.Profiles == nil {
		d.Profiles = map[string]map[string]string{}
	}
	return d, nil
}

func (s *Store) fileGet(profile, key string) (string, error) {
	d, err := s.readFile()
	if err != nil {
		return "", err
	}
	v, ok := d.Profiles[profile][key]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

func (s *Store) fileSet(ctx context.Context, profile, key, value string) error {
	if err := s.needDir(); err != nil {
		return err
	}
	return s.updateFile(ctx, func(d *fileData) bool {
		if d.Profiles[profile] == nil {
			d.Profiles[profile] = map[string]string{}
		}
		d.Profiles[profile][key] = value
		return true
	})
}

func (s *Store) fileDelete(ctx context.Context, profile, key string) error {
	if s.dir == "" {
		return nil
	}
	if _, err := os.Stat(s.filePath()); errors.Is(err, fs.ErrNotExist) {
		return nil // nothing to delete; do not create the directory or the lock
	}
	return s.updateFile(ctx, func(d *fileData) bool {
		if _, ok := d.Profiles[profile][key]; !ok {
			return false
		}
		delete(d.Profiles[profile], key)
		if len(d.Profiles[profile]) == 0 {
			delete(d.Profiles, profile)
		}
		return true
	})
}

// updateFile applies change to credentials.json under an in-process mutex and a file
// lock, and writes the result atomically (temporary file with mode 0600, then
// rename). An update that leaves no credentials removes the file.
func (s *Store) updateFile(ctx context.Context, change func(*fileData) bool) error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()

	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	fl := flock.New(filepath.Join(s.dir, fileLockName))
	ok, err := fl.TryLockContext(ctx, lockPoll)
	if err != nil {
		return fmt.Errorf("credstore: locking %s: %w", s.filePath(), err)
	}
	if !ok {
		return fmt.Errorf("credstore: locking %s: %w", s.filePath(), ctx.Err())
	}
	defer fl.Unlock()

	d, err := s.readFile()
	if err != nil {
		return err
	}
	if !change(d) {
		return nil
	}
	if len(d.Profiles) == 0 {
		if err := os.Remove(s.filePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("credstore: %w", err)
		}
		return nil
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("credstore: encoding credentials: %w", err)
	}
	return writeAtomic(s.filePath(), append(b, '\n'))
}

// writeAtomic writes b to path through a temporary file in the same directory,
// created with mode 0600, synced, then renamed over path.
func writeAtomic(path string, b []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// CreateTemp already uses 0600; make it explicit whatever the platform does.
	if err := tmp.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("credstore: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		return fmt.Errorf("credstore: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	return nil
}
