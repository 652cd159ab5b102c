package credstore

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// fakeKeyring is an in-memory backend. It can hang (every call blocks until the test
// ends), fail every call with err, or refuse values longer than maxSize with
// keyring.ErrSetDataTooBig, as go-keyring does on Windows and macOS.
type fakeKeyring struct {
	mu      sync.Mutex
	items   map[string]string // "service\x00user" → value
	calls   int
	hang    chan struct{} // when non-nil, calls block until it is closed
	entered chan struct{} // when non-nil, receives (without blocking) on each call
	err     error         // when non-nil, every call fails with it
	maxSize int           // when > 0, Set of a longer value fails with ErrSetDataTooBig
	largest int           // longest value stored
}

func newFake() *fakeKeyring { return &fakeKeyring{items: map[string]string{}} }

func (f *fakeKeyring) enter() (error, chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.entered != nil {
		select {
		case f.entered <- struct{}{}:
		default:
		}
	}
	return f.err, f.hang
}

func (f *fakeKeyring) Get(service, user string) (string, error) {
	err, hang := f.enter()
	if hang != nil {
		<-hang
	}
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.items[service+"\x00"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (f *fakeKeyring) Set(service, user, password string) error {
	err, hang := f.enter()
	if hang != nil {
		<-hang
	}
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maxSize > 0 && len(password) > f.maxSize {
		return keyring.ErrSetDataTooBig
	}
	f.items[service+"\x00"+user] = password
	f.largest = max(f.largest, len(password))
	return nil
}

func (f *fakeKeyring) Delete(service, user string) error {
	err, hang := f.enter()
	if hang != nil {
		<-hang
	}
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := service + "\x00" + user
	if _, ok := f.items[k]; !ok {
		return keyring.ErrNotFound
	}
	delete(f.items, k)
	return nil
}

// users lists the user names stored under the service, sorted.
func (f *fakeKeyring) users(service string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var us []string
	for k := range f.items {
		if s, u, _ := strings.Cut(k, "\x00"); s == service {
			us = append(us, u)
		}
	}
	sort.Strings(us)
	return us
}

func (f *fakeKeyring) item(user string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.items[Service+"\x00"+user]
	return v, ok
}

func (f *fakeKeyring) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// newTestStore returns a Store on a fresh directory with the given backend.
func newTestStore(t *testing.T, kr backend, opts Options) (*Store, *syncBuffer) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	notice := &syncBuffer{}
	if opts.Notice == nil {
		opts.Notice = notice
	}
	s := New(opts)
	s.kr = kr
	return s, notice
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
