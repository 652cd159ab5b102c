package credstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zalando/go-keyring"
)

// backend is the part of go-keyring the Store uses, with its signatures, so that
// tests can inject a keyring that hangs, fails or limits item sizes.
type backend interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

// goKeyring is the default backend: the OS keyring through zalando/go-keyring.
type goKeyring struct{}

func (goKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (goKeyring) Set(service, user, password string) error {
	return keyring.Set(service, user, password)
}
func (goKeyring) Delete(service, user string) error { return keyring.Delete(service, user) }

// defaultMaxItem is the largest value stored as a single item on this platform.
//   - windows: the credential blob is limited to 2560 bytes (go-keyring checks it).
//   - darwin: go-keyring base64-encodes the value (4/3) into one `security -i` command
//     line of at most 4096 bytes together with service and user names; 2048 raw
//     bytes leave room for long names.
//   - Secret Service (Linux, BSD): no practical limit.
func defaultMaxItem() int {
	switch runtime.GOOS {
	case "windows":
		return 2560
	case "darwin":
		return 2048
	default:
		return 0
	}
}

// minChunk is the smallest chunk size tried when the keyring keeps answering
// ErrSetDataTooBig; below it the value goes to the file.
const minChunk = 128

// headerPrefix starts the header item of a chunked value:
// "vcs-chunked:v1:<chunks>:<length>:<sha256 hex>". A value that itself starts with
// the prefix is always stored chunked, so a plain item never looks like a header.
const headerPrefix = "vcs-chunked:v1:"

// errKeyringNotFound is the keyring's "no such item"; it never means "unavailable".
var errKeyringNotFound = errors.New("credstore: not found in keyring")

// errCorrupt reports a chunked entry whose parts do not add up.
var errCorrupt = errors.New("credstore: keyring entry is incomplete or corrupt (store it again, e.g. log in again)")

// unavailableError means "use the file instead". sticky: the keyring itself is
// unusable (timeout, no D-Bus, locked collection...) and the Store stops calling it;
// not sticky: it only refused one value (too big even in small chunks).
type unavailableError struct {
	reason string
	sticky bool
}

func (e *unavailableError) Error() string { return "credstore: OS keyring unavailable: " + e.reason }

func itemUser(profile, key string) string { return profile + ":" + key }

func chunkUser(profile, key string, n int) string {
	return profile + ":" + key + "#" + strconv.Itoa(n)
}

// call runs one backend operation in a goroutine and waits for it at most s.timeout,
// or until ctx ends. Results are classified:
//   - keyring.ErrNotFound → errKeyringNotFound
//   - keyring.ErrSetDataTooBig → returned as is
//   - ctx ended → ctx.Err() (not a fallback: the caller gave up)
//   - timeout or any other error → a sticky *unavailableError
//
// A timed-out operation keeps running in its goroutine; the Store never calls the
// keyring again, so at most one such goroutine is left per Store.
func (s *Store) call(ctx context.Context, op func() (string, error)) (string, error) {
	if ue := s.down.Load(); ue != nil {
		return "", ue
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := op()
		done <- result{v, err}
	}()
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		switch {
		case r.err == nil:
			return r.v, nil
		case errors.Is(r.err, keyring.ErrNotFound):
			return "", errKeyringNotFound
		case errors.Is(r.err, keyring.ErrSetDataTooBig):
			return "", keyring.ErrSetDataTooBig
		default:
			return "", s.markDown(r.err.Error())
		}
	case <-timer.C:
		return "", s.markDown(fmt.Sprintf("no answer within %s", s.timeout))
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (s *Store) markDown(reason string) *unavailableError {
	ue := &unavailableError{reason: reason, sticky: true}
	if s.down.CompareAndSwap(nil, ue) {
		return ue
	}
	return s.down.Load()
}

func (s *Store) krGet(ctx context.Context, user string) (string, error) {
	return s.call(ctx, func() (string, error) { return s.kr.Get(Service, user) })
}

func (s *Store) krSet(ctx context.Context, user, value string) error {
	_, err := s.call(ctx, func() (string, error) { return "", s.kr.Set(Service, user, value) })
	return err
}

func (s *Store) krDelete(ctx context.Context, user string) error {
	_, err := s.call(ctx, func() (string, error) { return "", s.kr.Delete(Service, user) })
	return err
}

// keyringGet reads an entry, reassembling chunks. A chunked entry that does not add
// up (a concurrent writer, or a crash mid-write) is read again a few times before
// errCorrupt is returned.
func (s *Store) keyringGet(ctx context.Context, profile, key string) (string, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var v string
		v, err = s.keyringGetOnce(ctx, profile, key)
		if !errors.Is(err, errCorrupt) {
			return v, err
		}
	}
	return "", err
}

func (s *Store) keyringGetOnce(ctx context.Context, profile, key string) (string, error) {
	head, err := s.krGet(ctx, itemUser(profile, key))
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(head, headerPrefix) {
		return head, nil
	}
	n, length, sum, ok := parseHeader(head)
	if !ok {
		return "", errCorrupt
	}
	var b strings.Builder
	b.Grow(length)
	for i := 0; i < n; i++ {
		part, err := s.krGet(ctx, chunkUser(profile, key, i))
		if errors.Is(err, errKeyringNotFound) {
			return "", errCorrupt
		}
		if err != nil {
			return "", err
		}
		b.WriteString(part)
	}
	v := b.String()
	if len(v) != length || checksum(v) != sum {
		return "", errCorrupt
	}
	return v, nil
}

// keyringSet writes an entry: one item when it fits, otherwise chunks then the
// header; then removes chunks left over from a longer previous value. When the
// keyring answers ErrSetDataTooBig, it retries with chunks half the size (and the
// Store remembers the smaller limit), down to minChunk; past that, it returns a
// non-sticky *unavailableError so the value goes to the file.
func (s *Store) keyringSet(ctx context.Context, profile, key, value string) error {
	limit := int(s.maxItem.Load())
	size := limit
	if !strings.HasPrefix(value, headerPrefix) && (limit <= 0 || len(value) <= limit) {
		err := s.krSet(ctx, itemUser(profile, key), value)
		if err == nil {
			return s.deleteChunksFrom(ctx, profile, key, 0)
		}
		if !errors.Is(err, keyring.ErrSetDataTooBig) {
			return err
		}
		size = len(value) / 2
		if size < minChunk {
			return tooBig(value)
		}
		s.lowerMaxItem(size)
	} else if size <= 0 {
		size = max(len(value), 1) // a header-looking value, chunked although it fits
	}
	for {
		err := s.keyringSetChunked(ctx, profile, key, value, size)
		if err == nil {
			return nil
		}
		if !errors.Is(err, keyring.ErrSetDataTooBig) {
			return err
		}
		size /= 2
		if size < minChunk {
			return tooBig(value)
		}
		s.lowerMaxItem(size)
	}
}

func tooBig(value string) error {
	return &unavailableError{reason: "it refused a value of " + strconv.Itoa(len(value)) + " bytes"}
}

func (s *Store) lowerMaxItem(n int) {
	for {
		cur := s.maxItem.Load()
		if cur > 0 && cur <= int64(n) {
			return
		}
		if s.maxItem.CompareAndSwap(cur, int64(n)) {
			return
		}
	}
}

func (s *Store) keyringSetChunked(ctx context.Context, profile, key, value string, size int) error {
	parts := split(value, size)
	for i, p := range parts {
		if err := s.krSet(ctx, chunkUser(profile, key, i), p); err != nil {
			return err
		}
	}
	head := fmt.Sprintf("%s%d:%d:%s", headerPrefix, len(parts), len(value), checksum(value))
	if err := s.krSet(ctx, itemUser(profile, key), head); err != nil {
		return err
	}
	return s.deleteChunksFrom(ctx, profile, key, len(parts))
}

// deleteChunksFrom deletes chunk items from number n upwards until one is absent.
func (s *Store) deleteChunksFrom(ctx context.Context, profile, key string, n int) error {
	for i := n; ; i++ {
		err := s.krDelete(ctx, chunkUser(profile, key, i))
		if errors.Is(err, errKeyringNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// keyringDelete removes the entry and its chunks. The header goes first, so that a
// reader sees "absent" rather than a half-deleted value.
func (s *Store) keyringDelete(ctx context.Context, profile, key string) error {
	err := s.krDelete(ctx, itemUser(profile, key))
	if err != nil && !errors.Is(err, errKeyringNotFound) {
		return err
	}
	if err := s.deleteChunksFrom(ctx, profile, key, 0); err != nil {
		return err
	}
	return err // errKeyringNotFound when there was no entry
}

// split cuts v into pieces of at most size bytes, never inside a UTF-8 sequence
// (unless a single rune is longer than size, which cannot happen for size >= 4).
func split(v string, size int) []string {
	var parts []string
	for len(v) > size {
		end := size
		for end > 0 && !utf8.RuneStart(v[end]) {
			end--
		}
		if end == 0 {
			end = size
		}
		parts = append(parts, v[:end])
		v = v[end:]
	}
	return append(parts, v)
}

func checksum(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:])
}

func parseHeader(h string) (n, length int, sum string, ok bool) {
	f := strings.Split(strings.TrimPrefix(h, headerPrefix), ":")
	if len(f) != 3 {
		return 0, 0, "", false
	}
	n, err1 := strconv.Atoi(f[0])
	length, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || n < 1 || n > 1<<16 || length < 0 || len(f[2]) != 64 {
		return 0, 0, "", false
	}
	return n, length, f[2], true
}
