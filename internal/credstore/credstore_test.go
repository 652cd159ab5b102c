package credstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

const secret = "s3cr3t-value-never-printed"

// bigValue returns n bytes of a deterministic, varied ASCII string.
func bigValue(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%x-", i*2654435761)
	}
	return b.String()[:n]
}

func readCredFile(t *testing.T, dir string) fileData {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatalf("reading credentials file: %v", err)
	}
	var d fileData
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("credentials file is not valid JSON: %v", err)
	}
	return d
}

func assertNoFile(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("credentials file exists (or stat failed: %v); want none", err)
	}
}

func mustGet(t *testing.T, s *Store, profile, key string) string {
	t.Helper()
	v, err := s.Get(testCtx(t), profile, key)
	if err != nil {
		t.Fatalf("Get(%s, %s): %v", profile, key, err)
	}
	return v
}

func TestKeyringRoundTrip(t *testing.T) {
	kr := newFake()
	s, notice := newTestStore(t, kr, Options{})
	ctx := testCtx(t)

	if _, err := s.Get(ctx, "dev", KeyTokens); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of an absent secret: err = %v, want ErrNotFound", err)
	}
	if err := s.Set(ctx, "dev", KeyTokens, secret); err != nil {
		t.Fatal(err)
	}
	if v, ok := kr.item("dev:" + KeyTokens); !ok || v != secret {
		t.Fatalf("keyring item dev:tokens = %q, %v; want the secret", v, ok)
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != secret {
		t.Fatalf("Get = %q", got)
	}
	if err := s.Set(ctx, "dev", KeyTokens, "second"); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != "second" {
		t.Fatalf("Get after overwrite = %q", got)
	}
	if err := s.Set(ctx, "dev", KeyClientSecret, "cs"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "dev", KeyTokens); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "dev", KeyTokens); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: err = %v, want ErrNotFound", err)
	}
	if got := mustGet(t, s, "dev", KeyClientSecret); got != "cs" {
		t.Fatalf("the other key was disturbed: %q", got)
	}
	if err := s.Delete(ctx, "dev", KeyTokens); err != nil {
		t.Fatalf("Delete of an absent secret: %v", err)
	}
	assertNoFile(t, s.dir)
	if notice.String() != "" {
		t.Fatalf("unexpected notice: %q", notice.String())
	}
}

func TestHangingKeyringFallsBackWithinTimeout(t *testing.T) {
	kr := newFake()
	kr.hang = make(chan struct{})
	t.Cleanup(func() { close(kr.hang) }) // release the abandoned goroutines
	const timeout = 100 * time.Millisecond
	s, notice := newTestStore(t, kr, Options{Timeout: timeout})
	ctx := testCtx(t)

	start := time.Now()
	if err := s.Set(ctx, "dev", KeyTokens, secret); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if d := time.Since(start); d < timeout || d > timeout+3*time.Second {
		t.Fatalf("Set took %v; want about the %v timeout", d, timeout)
	}

	// Later calls do not wait again: the keyring is known to be unavailable, and is
	// not called any more (checked with the call count below).
	if err := s.Set(ctx, "dev", KeyClientSecret, "cs"); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != secret {
		t.Fatalf("Get = %q", got)
	}
	if _, err := s.Get(ctx, "other", KeyTokens); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of an absent secret: %v", err)
	}
	if err := s.Delete(ctx, "dev", KeyClientSecret); err != nil {
		t.Fatal(err)
	}
	if n := kr.callCount(); n != 1 {
		t.Fatalf("keyring called %d times; want 1 (then marked unavailable)", n)
	}

	d := readCredFile(t, s.dir)
	if d.Profiles["dev"][KeyTokens] != secret || len(d.Profiles["dev"]) != 1 {
		t.Fatalf("file content wrong: %d entries for dev", len(d.Profiles["dev"]))
	}
	out := notice.String()
	if c := strings.Count(out, "warning: OS keyring unavailable"); c != 1 {
		t.Fatalf("notice printed %d times; want once. Output: %q", c, out)
	}
	for _, want := range []string{filepath.Join(s.dir, FileName), "mode 0600", "--insecure-storage", "100ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("notice %q does not mention %q", out, want)
		}
	}
	if strings.Contains(out, secret) {
		t.Fatal("notice contains the secret")
	}
}

func TestUnavailableKeyringErrorsFallBack(t *testing.T) {
	for name, kerr := range map[string]error{
		"no D-Bus session": &exec.Error{Name: "dbus-launch", Err: exec.ErrNotFound},
		"locked keyring":   errors.New("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'"),
		"bus gone":         errors.New("dial unix /run/user/1000/bus: connect: no such file or directory"),
	} {
		t.Run(name, func(t *testing.T) {
			kr := newFake()
			kr.err = kerr
			s, notice := newTestStore(t, kr, Options{})
			ctx := testCtx(t)
			if err := s.Set(ctx, "dev", KeyTokens, secret); err != nil {
				t.Fatalf("Set: %v", err)
			}
			if err := s.Set(ctx, "dev", KeyClientSecret, "cs"); err != nil {
				t.Fatalf("Set: %v", err)
			}
			if got := mustGet(t, s, "dev", KeyTokens); got != secret {
				t.Fatalf("Get = %q", got)
			}
			d := readCredFile(t, s.dir)
			if d.Profiles["dev"][KeyTokens] != secret || d.Profiles["dev"][KeyClientSecret] != "cs" {
				t.Fatal("file does not hold both secrets")
			}
			out := notice.String()
			if c := strings.Count(out, "warning: OS keyring unavailable"); c != 1 {
				t.Fatalf("notice printed %d times; want once: %q", c, out)
			}
			if !strings.Contains(out, kerr.Error()) {
				t.Errorf("notice %q does not give the reason %q", out, kerr.Error())
			}
			if strings.Contains(out, secret) {
				t.Fatal("notice contains the secret")
			}
			if n := kr.callCount(); n != 1 {
				t.Fatalf("keyring called %d times; want 1", n)
			}
		})
	}
}

func TestKeyringNotFoundIsNotAFallback(t *testing.T) {
	kr := newFake()
	s, notice := newTestStore(t, kr, Options{})
	ctx := testCtx(t)
	if _, err := s.Get(ctx, "dev", KeyTokens); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "dev", KeyTokens); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if notice.String() != "" {
		t.Fatalf("a not-found answer printed a notice: %q", notice.String())
	}
	if s.down.Load() != nil {
		t.Fatal("a not-found answer marked the keyring unavailable")
	}
	if err := s.Set(ctx, "dev", KeyTokens, secret); err != nil {
		t.Fatal(err)
	}
	if _, ok := kr.item("dev:" + KeyTokens); !ok {
		t.Fatal("Set after a not-found did not use the keyring")
	}
	assertNoFile(t, s.dir)
}

func TestContextCancelledWhileKeyringHangs(t *testing.T) {
	kr := newFake()
	kr.hang = make(chan struct{})
	kr.entered = make(chan struct{}, 1)
	t.Cleanup(func() { close(kr.hang) })
	s, notice := newTestStore(t, kr, Options{Timeout: time.Hour})

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Set(ctx, "dev", KeyTokens, secret) }()
	<-kr.entered
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Set did not return after the context was cancelled")
	}
	assertNoFile(t, s.dir)
	if notice.String() != "" || s.down.Load() != nil {
		t.Fatal("cancellation was taken for an unavailable keyring")
	}
}

func TestChunkingRoundTrip(t *testing.T) {
	kr := newFake()
	s, notice := newTestStore(t, kr, Options{})
	s.maxItem.Store(1000)
	kr.maxSize = 1000 // the fake enforces the limit as Windows/macOS would
	ctx := testCtx(t)
	big := bigValue(10 * 1024)

	if err := s.Set(ctx, "dev", KeyTokens, big); err != nil {
		t.Fatal(err)
	}
	want := []string{"dev:tokens"}
	for i := 0; i < 11; i++ { // 10240 bytes in chunks of 1000
		want = append(want, fmt.Sprintf("dev:tokens#%d", i))
	}
	assertUsers(t, kr, want)
	if got := mustGet(t, s, "dev", KeyTokens); got != big {
		t.Fatalf("reassembled value differs (len %d, want %d)", len(got), len(big))
	}

	// A shorter value that still needs chunks leaves no stale chunks behind.
	mid := bigValue(2500)
	if err := s.Set(ctx, "dev", KeyTokens, mid); err != nil {
		t.Fatal(err)
	}
	assertUsers(t, kr, []string{"dev:tokens", "dev:tokens#0", "dev:tokens#1", "dev:tokens#2"})
	if got := mustGet(t, s, "dev", KeyTokens); got != mid {
		t.Fatal("value differs after overwrite with a medium value")
	}

	// Overwriting with a short value removes every chunk.
	if err := s.Set(ctx, "dev", KeyTokens, big); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "dev", KeyTokens, "short"); err != nil {
		t.Fatal(err)
	}
	assertUsers(t, kr, []string{"dev:tokens"})
	if got := mustGet(t, s, "dev", KeyTokens); got != "short" {
		t.Fatalf("Get = %q", got)
	}

	// Delete removes header and chunks.
	if err := s.Set(ctx, "dev", KeyTokens, big); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "dev", KeyTokens); err != nil {
		t.Fatal(err)
	}
	assertUsers(t, kr, nil)
	if _, err := s.Get(ctx, "dev", KeyTokens); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	assertNoFile(t, s.dir)
	if notice.String() != "" {
		t.Fatalf("unexpected notice: %q", notice.String())
	}
}

func assertUsers(t *testing.T, kr *fakeKeyring, want []string) {
	t.Helper()
	got := kr.users(Service)
	want = append([]string(nil), want...)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("keyring items = %v\nwant %v", got, want)
	}
}

func TestChunksSplitOnRuneBoundaries(t *testing.T) {
	kr := newFake()
	s, _ := newTestStore(t, kr, Options{})
	s.maxItem.Store(999)
	ctx := testCtx(t)
	v := strings.Repeat("é€x", 1500) // 2-, 3- and 1-byte runes
	if err := s.Set(ctx, "dev", KeyTokens, v); err != nil {
		t.Fatal(err)
	}
	users := kr.users(Service)
	if len(users) < 3 {
		t.Fatalf("value was not chunked: %v", users)
	}
	for _, u := range users {
		c, _ := kr.item(u)
		if !utf8.ValidString(c) || len(c) > 999 {
			t.Fatalf("item %s: %d bytes, valid UTF-8 %v", u, len(c), utf8.ValidString(c))
		}
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != v {
		t.Fatal("reassembled value differs")
	}
}

func TestHeaderLookingValueRoundTrips(t *testing.T) {
	kr := newFake()
	s, _ := newTestStore(t, kr, Options{})
	s.maxItem.Store(0) // no limit, as on Linux
	ctx := testCtx(t)
	v := headerPrefix + "1:5:" + strings.Repeat("0", 64)
	if err := s.Set(ctx, "dev", KeyClientSecret, v); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "dev", KeyClientSecret); got != v {
		t.Fatalf("Get = %q, want %q", got, v)
	}
	if head, _ := kr.item("dev:" + KeyClientSecret); head == v {
		t.Fatal("a header-looking value was stored as a plain item")
	}
	if err := s.Set(ctx, "dev", KeyClientSecret, "plain"); err != nil {
		t.Fatal(err)
	}
	assertUsers(t, kr, []string{"dev:client-secret"})
}

func TestSetDataTooBigFallsBackToSmallerChunks(t *testing.T) {
	kr := newFake()
	kr.maxSize = 700 // the keyring refuses more, although the Store thinks there is no limit
	s, notice := newTestStore(t, kr, Options{})
	s.maxItem.Store(0)
	ctx := testCtx(t)
	big := bigValue(10 * 1024)
	if err := s.Set(ctx, "dev", KeyTokens, big); err != nil {
		t.Fatal(err)
	}
	if kr.largest > 700 {
		t.Fatalf("stored an item of %d bytes", kr.largest)
	}
	if len(kr.users(Service)) < 16 {
		t.Fatalf("expected chunks, got %v", kr.users(Service))
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != big {
		t.Fatal("reassembled value differs")
	}
	if m := s.maxItem.Load(); m <= 0 || m > 700 {
		t.Fatalf("maxItem = %d; want it lowered to at most 700", m)
	}
	assertNoFile(t, s.dir)
	if notice.String() != "" {
		t.Fatalf("unexpected notice: %q", notice.String())
	}

	// A later value that fits in the learnt limit is stored directly.
	if err := s.Set(ctx, "dev", KeyTokens, "short"); err != nil {
		t.Fatal(err)
	}
	assertUsers(t, kr, []string{"dev:tokens"})
}

func TestSetDataTooBigEvenForTinyChunksUsesFile(t *testing.T) {
	kr := newFake()
	s, notice := newTestStore(t, kr, Options{})
	ctx := testCtx(t)
	if err := s.Set(ctx, "dev", KeyTokens, "old"); err != nil {
		t.Fatal(err)
	}
	kr.mu.Lock()
	kr.maxSize = 50 // below minChunk: hopeless
	kr.mu.Unlock()
	big := bigValue(4096)
	if err := s.Set(ctx, "dev", KeyTokens, big); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != big {
		t.Fatal("Get did not return the value stored in the file")
	}
	if readCredFile(t, s.dir).Profiles["dev"][KeyTokens] != big {
		t.Fatal("value not in the file")
	}
	assertUsers(t, kr, nil) // the older keyring copy is gone
	if !strings.Contains(notice.String(), "refused a value of 4096 bytes") {
		t.Fatalf("notice = %q", notice.String())
	}
	if s.down.Load() != nil {
		t.Fatal("a refused value marked the whole keyring unavailable")
	}
	// The keyring is still used for values it accepts, and that removes the file copy.
	if err := s.Set(ctx, "dev", KeyTokens, "small"); err != nil {
		t.Fatal(err)
	}
	assertUsers(t, kr, []string{"dev:tokens"})
	assertNoFile(t, s.dir)
}

func TestCorruptChunkIsAnErrorWithoutTheValue(t *testing.T) {
	kr := newFake()
	s, _ := newTestStore(t, kr, Options{})
	s.maxItem.Store(100)
	ctx := testCtx(t)
	v := strings.Repeat(secret, 20)
	if err := s.Set(ctx, "dev", KeyTokens, v); err != nil {
		t.Fatal(err)
	}
	kr.mu.Lock()
	kr.items[Service+"\x00dev:tokens#1"] = "tampered"
	kr.mu.Unlock()
	_, err := s.Get(ctx, "dev", KeyTokens)
	if !errors.Is(err, errCorrupt) {
		t.Fatalf("err = %v, want errCorrupt", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "tampered") {
		t.Fatalf("error leaks the value: %v", err)
	}
	// A missing chunk too.
	if err := kr.Delete(Service, "dev:tokens#1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "dev", KeyTokens); !errors.Is(err, errCorrupt) {
		t.Fatalf("missing chunk: err = %v, want errCorrupt", err)
	}
}

func TestInsecureNeverTouchesKeyring(t *testing.T) {
	kr := newFake()
	kr.err = errors.New("the keyring must not be called")
	s, notice := newTestStore(t, kr, Options{Insecure: true})
	ctx := testCtx(t)
	if err := s.Set(ctx, "dev", KeyTokens, secret); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != secret {
		t.Fatalf("Get = %q", got)
	}
	if _, err := s.Get(ctx, "dev", KeyClientSecret); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get absent: %v", err)
	}
	if readCredFile(t, s.dir).Profiles["dev"][KeyTokens] != secret {
		t.Fatal("not in the file")
	}
	if err := s.Delete(ctx, "dev", KeyTokens); err != nil {
		t.Fatal(err)
	}
	assertNoFile(t, s.dir) // the last entry gone, the file goes too
	if n := kr.callCount(); n != 0 {
		t.Fatalf("keyring called %d times in insecure mode", n)
	}
	if notice.String() != "" {
		t.Fatalf("insecure mode printed a notice: %q", notice.String())
	}
}

func TestFileAndDirectoryModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permission bits do not apply on Windows")
	}
	for _, insecure := range []bool{true, false} {
		t.Run(fmt.Sprintf("insecure=%v", insecure), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "config", "vcs")
			kr := newFake()
			kr.err = errors.New("failed to unlock correct collection '/org/freedesktop/secrets/collection/login'")
			s, _ := newTestStore(t, kr, Options{Dir: dir, Insecure: insecure})
			ctx := testCtx(t)
			if err := s.Set(ctx, "dev", KeyTokens, secret); err != nil {
				t.Fatal(err)
			}
			checkMode(t, dir, 0o700)
			checkMode(t, filepath.Join(dir, FileName), 0o600)

			// A file someone loosened is replaced by a 0600 one.
			if err := os.Chmod(filepath.Join(dir, FileName), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.Set(ctx, "dev", KeyClientSecret, "cs"); err != nil {
				t.Fatal(err)
			}
			checkMode(t, filepath.Join(dir, FileName), 0o600)

			// No temporary files are left behind.
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if strings.Join(names, ",") != fileLockName+","+FileName {
				t.Fatalf("directory holds %v", names)
			}
		})
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Fatalf("%s: mode %o, want %o", path, got, want)
	}
}

func TestFileFormat(t *testing.T) {
	s, _ := newTestStore(t, newFake(), Options{Insecure: true})
	ctx := testCtx(t)
	for _, e := range [][3]string{{"dev", KeyTokens, `{"access_token":"a"}`}, {"dev", KeyClientSecret, "cs"}, {"prod", KeyTokens, "t"}} {
		if err := s.Set(ctx, e[0], e[1], e[2]); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(s.dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]map[string]string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]map[string]string{"profiles": {
		"dev":  {KeyTokens: `{"access_token":"a"}`, KeyClientSecret: "cs"},
		"prod": {KeyTokens: "t"},
	}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("file = %s", b)
	}
}

func TestConcurrentSetsKeepTheFileValid(t *testing.T) {
	dir := t.TempDir()
	const stores, perStore = 4, 16
	var wg sync.WaitGroup
	errc := make(chan error, stores*perStore)
	for i := 0; i < stores; i++ {
		// Separate Stores have separate mutexes: only the file lock serializes them.
		s, _ := newTestStore(t, newFake(), Options{Dir: dir, Insecure: true})
		for j := 0; j < perStore; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := fmt.Sprintf("p%d", i)
				errc <- s.Set(context.Background(), p, fmt.Sprintf("k%d", j), fmt.Sprintf("v%d-%d", i, j))
			}()
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	d := readCredFile(t, dir)
	n := 0
	for i := 0; i < stores; i++ {
		for j := 0; j < perStore; j++ {
			if d.Profiles[fmt.Sprintf("p%d", i)][fmt.Sprintf("k%d", j)] == fmt.Sprintf("v%d-%d", i, j) {
				n++
			}
		}
	}
	if n != stores*perStore {
		t.Fatalf("file holds %d of %d entries: an update was lost", n, stores*perStore)
	}
}

func TestFileEntryWinsAndMigratesToKeyring(t *testing.T) {
	kr := newFake()
	s, notice := newTestStore(t, kr, Options{})
	ctx := testCtx(t)
	// An older value in the keyring, a newer one in the file (written while the
	// keyring was unavailable).
	if err := kr.Set(Service, "dev:tokens", "older"); err != nil {
		t.Fatal(err)
	}
	if err := s.fileSet(ctx, "dev", KeyTokens, "newer"); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != "newer" {
		t.Fatalf("Get = %q, want the file's newer value", got)
	}
	// Storing with a working keyring moves the secret out of the file.
	if err := s.Set(ctx, "dev", KeyTokens, "newest"); err != nil {
		t.Fatal(err)
	}
	assertNoFile(t, s.dir)
	if v, _ := kr.item("dev:tokens"); v != "newest" {
		t.Fatalf("keyring holds %q", v)
	}
	if got := mustGet(t, s, "dev", KeyTokens); got != "newest" {
		t.Fatalf("Get = %q", got)
	}
	if notice.String() != "" {
		t.Fatalf("unexpected notice: %q", notice.String())
	}
}

func TestDeleteRemovesFromBoth(t *testing.T) {
	kr := newFake()
	s, _ := newTestStore(t, kr, Options{})
	ctx := testCtx(t)
	if err := s.Set(ctx, "dev", KeyTokens, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.fileSet(ctx, "dev", KeyTokens, "f"); err != nil {
		t.Fatal(err)
	}
	if err := s.fileSet(ctx, "dev", KeyClientSecret, "keep"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "dev", KeyTokens); err != nil {
		t.Fatal(err)
	}
	assertUsers(t, kr, nil)
	d := readCredFile(t, s.dir)
	if _, ok := d.Profiles["dev"][KeyTokens]; ok || d.Profiles["dev"][KeyClientSecret] != "keep" {
		t.Fatalf("file after Delete: %v entries", len(d.Profiles["dev"]))
	}
}

func TestDeleteWithUnavailableKeyringStillClearsTheFile(t *testing.T) {
	kr := newFake()
	kr.err = &exec.Error{Name: "dbus-launch", Err: exec.ErrNotFound}
	s, _ := newTestStore(t, kr, Options{})
	ctx := testCtx(t)
	if err := s.Set(ctx, "dev", KeyTokens, secret); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "dev", KeyTokens); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	assertNoFile(t, s.dir)
}

func TestCorruptFileErrorDoesNotQuoteIt(t *testing.T) {
	s, _ := newTestStore(t, newFake(), Options{Insecure: true})
	if err := os.WriteFile(filepath.Join(s.dir, FileName), []byte(`{"profiles":{"dev":{"tokens":Zsecret}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(testCtx(t), "dev", KeyTokens)
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want a parse error", err)
	}
	if strings.Contains(err.Error(), "Z") || !strings.Contains(err.Error(), FileName) {
		t.Fatalf("error %q quotes the file or does not name it", err)
	}
	// Set must not overwrite a file it cannot read (other credentials would be lost).
	if err := s.Set(testCtx(t), "dev", KeyClientSecret, "cs"); err == nil {
		t.Fatal("Set replaced an unreadable credentials file")
	}
}

func TestInvalidNames(t *testing.T) {
	s, _ := newTestStore(t, newFake(), Options{})
	ctx := testCtx(t)
	for _, p := range []string{"", "../x", "a/b", "a:b", "a#1", ".hidden", strings.Repeat("x", 65)} {
		if err := s.Set(ctx, p, KeyTokens, "v"); err == nil {
			t.Errorf("Set accepted profile %q", p)
		}
		if _, err := s.Lock(ctx, p); err == nil {
			t.Errorf("Lock accepted profile %q", p)
		}
	}
	if _, err := s.Get(ctx, "dev", "a:b"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Get accepted key a:b: %v", err)
	}
}

func TestNoDirectory(t *testing.T) {
	kr := newFake()
	kr.err = errors.New("failed to unlock correct collection")
	s := New(Options{Notice: &syncBuffer{}})
	s.kr = kr
	if err := s.Set(testCtx(t), "dev", KeyTokens, "v"); err == nil {
		t.Fatal("Set with neither keyring nor directory succeeded")
	}
	if _, err := s.Get(testCtx(t), "dev", KeyTokens); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	s := New(Options{})
	if s.timeout != DefaultTimeout || s.notice != os.Stderr {
		t.Fatal("defaults not applied")
	}
	if _, ok := s.kr.(goKeyring); !ok {
		t.Fatalf("default backend is %T", s.kr)
	}
	if got, want := s.maxItem.Load(), int64(defaultMaxItem()); got != want {
		t.Fatalf("maxItem = %d, want %d", got, want)
	}
}
