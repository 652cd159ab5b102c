// Package credstore keeps the CLI's secrets (a profile's token set and its partner
// client secret) in the OS keyring, with a file fallback.
//
// Every keyring call is bounded by a timeout, because go-keyring can hang (WSL,
// headless Linux with a stuck D-Bus). When the keyring is unavailable (the call
// times out or fails with anything other than "not found") the Store uses
// credentials.json in the config directory instead (mode 0600, directory 0700,
// written atomically) and says so once on the notice writer. Options.Insecure
// (the CLI's --insecure-storage) selects the file directly.
//
// Values larger than the platform's keyring item limit are split into chunks
// stored as separate items under a small header item.
//
// Lookup order: an entry in credentials.json, when there is one, is always the most
// recent value, because a successful keyring Set removes the entry from the file.
// Get therefore reads the file first and asks the keyring only when the file has no
// entry; a host whose keyring hangs pays the timeout only for secrets it does not
// have.
//
// Concurrency: a Store is safe for use by several goroutines, and writes to
// credentials.json are serialized across processes by a file lock. Keyring writes of
// one entry by two processes at once are not serialized; callers that
// read-modify-write an entry (token refresh) hold Lock around it.
//
// Nothing in this package prints or wraps a secret value.
package credstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
)

// Keys of the two secrets the CLI keeps per profile.
const (
	KeyTokens       = "tokens"        // the token set, as a JSON string built by the caller
	KeyClientSecret = "client-secret" // the partner client's secret
)

// Service is the keyring service name under which every item is stored.
const Service = "vcs"

// DefaultTimeout bounds each keyring call when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// FileName is the name of the fallback file inside Options.Dir.
const FileName = "credentials.json"

// ErrNotFound is returned by Get when the secret is in neither the keyring nor the file.
var ErrNotFound = errors.New("credstore: credential not found")

// Options configure a Store.
type Options struct {
	// Dir is the config directory (e.g. $XDG_CONFIG_HOME/vcs). credentials.json and
	// the lock files live here. Required for the file fallback and for Lock.
	Dir string
	// Insecure stores credentials in the file only; the keyring is never used.
	Insecure bool
	// Timeout bounds each keyring call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Notice receives the one-time fallback notice; nil means os.Stderr.
	Notice io.Writer
}

// Store reads and writes a profile's secrets. Create one per process: the
// "notice once" flag and the "keyring is unavailable" verdict live in the Store.
type Store struct {
	dir      string
	insecure bool
	timeout  time.Duration
	notice   io.Writer

	// kr is the keyring backend; go-keyring by default, replaced in tests.
	kr backend
	// maxItem is the largest value stored as one keyring item (0: no limit). It is
	// lowered when the keyring answers ErrSetDataTooBig anyway.
	maxItem atomic.Int64

	// down records why the keyring was found unavailable; once set, the Store no
	// longer calls the keyring (so a hung keyring costs one timeout per process, and
	// hung calls do not pile up behind go-keyring's global D-Bus connection lock).
	down atomic.Pointer[unavailableError]

	noticeOnce sync.Once
	fileMu     sync.Mutex // serializes credentials.json updates within the process
}

// New returns a Store configured by opts.
func New(opts Options) *Store {
	s := &Store{
		dir:      opts.Dir,
		insecure: opts.Insecure,
		timeout:  opts.Timeout,
		notice:   opts.Notice,
		kr:       goKeyring{},
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.notice == nil {
		s.notice = os.Stderr
	}
	s.maxItem.Store(int64(defaultMaxItem()))
	return s
}

// nameRE restricts profile and key names: they become keyring user names
// ("<profile>:<key>#<n>") and lock file names ("<profile>.lock"), so they may hold
// neither separators nor path elements.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func validate(profile, key string) error {
	if !nameRE.MatchString(profile) {
		return fmt.Errorf("credstore: invalid profile name %q (letters, digits, '.', '_', '-'; up to 64)", profile)
	}
	if !nameRE.MatchString(key) {
		return fmt.Errorf("credstore: invalid key name %q", key)
	}
	return nil
}

// Get returns the secret stored for profile and key, or ErrNotFound.
func (s *Store) Get(ctx context.Context, profile, key string) (string, error) {
	if err := validate(profile, key); err != nil {
		return "", err
	}
	v, err := s.fileGet(profile, key)
	if err == nil || !errors.Is(err, ErrNotFound) || s.insecure {
		return v, err
	}
	v, err = s.keyringGet(ctx, profile, key)
	var ue *unavailableError
	switch {
	case err == nil:
		return v, nil
	case errors.As(err, &ue):
		s.warn(ue)
		return "", ErrNotFound
	case errors.Is(err, errKeyringNotFound):
		return "", ErrNotFound
	default:
		return "", err
	}
}

// Set stores value for profile and key: in the keyring, or in the file when the
// keyring is unavailable or the Store is Insecure.
func (s *Store) Set(ctx context.Context, profile, key, value string) error {
	if err := validate(profile, key); err != nil {
		return err
	}
	if s.insecure {
		return s.fileSet(ctx, profile, key, value)
	}
	err := s.keyringSet(ctx, profile, key, value)
	var ue *unavailableError
	switch {
	case err == nil:
		// The file must not keep an older copy: Get prefers the file.
		if err := s.fileDelete(ctx, profile, key); err != nil {
			return fmt.Errorf("credstore: stored in the keyring but could not remove the older copy: %w", err)
		}
		return nil
	case errors.As(err, &ue):
		s.warn(ue)
		if !ue.sticky {
			// The keyring works but refused this value: drop its older copy.
			_ = s.keyringDelete(ctx, profile, key)
		}
		return s.fileSet(ctx, profile, key, value)
	default:
		return err
	}
}

// Delete removes the secret from the keyring and from the file. A secret that is
// absent is not an error; neither is an unavailable keyring (the file entry is
// still removed).
func (s *Store) Delete(ctx context.Context, profile, key string) error {
	if err := validate(profile, key); err != nil {
		return err
	}
	if !s.insecure {
		err := s.keyringDelete(ctx, profile, key)
		var ue *unavailableError
		if err != nil && !errors.As(err, &ue) && !errors.Is(err, errKeyringNotFound) {
			return err
		}
	}
	return s.fileDelete(ctx, profile, key)
}

// warn prints the fallback notice, once per Store.
func (s *Store) warn(ue *unavailableError) {
	s.noticeOnce.Do(func() {
		fmt.Fprintf(s.notice, "warning: OS keyring unavailable (%s); using %s (mode 0600) for credentials instead. "+
			"Use --insecure-storage to store them there without trying the keyring.\n", ue.reason, s.filePath())
	})
}
