package credstore

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestLockExcludesSecondLocker(t *testing.T) {
	dir := t.TempDir()
	a, _ := newTestStore(t, newFake(), Options{Dir: dir})
	b, _ := newTestStore(t, newFake(), Options{Dir: dir})

	unlock, err := a.Lock(testCtx(t), "dev")
	if err != nil {
		t.Fatal(err)
	}
	// Held: a second locker (another Store, same directory) gives up when its
	// context ends.
	short, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(short, "dev"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock while held: err = %v, want DeadlineExceeded", err)
	}
	// The same Store is excluded too.
	short2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := a.Lock(short2, "dev"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("same-Store Lock while held: err = %v, want DeadlineExceeded", err)
	}
	// Another profile is independent.
	unlockOther, err := b.Lock(testCtx(t), "prod")
	if err != nil {
		t.Fatalf("Lock of another profile: %v", err)
	}
	unlockOther()

	// A waiting locker gets the lock once it is released.
	got := make(chan error, 1)
	go func() {
		u, err := b.Lock(testCtx(t), "dev")
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	unlock() // idempotent
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiting Lock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiting Lock did not get the released lock")
	}
}

func TestLockHonoursCancellation(t *testing.T) {
	s, _ := newTestStore(t, newFake(), Options{})
	unlock, err := s.Lock(testCtx(t), "dev")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Lock(ctx, "dev")
		errc <- err
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lock ignored the cancelled context")
	}
}

// TestLockExcludesOtherProcess holds the lock in a helper process, then the other
// way round.
func TestLockExcludesOtherProcess(t *testing.T) {
	dir := t.TempDir()
	s, _ := newTestStore(t, newFake(), Options{Dir: dir})

	// 1. The helper holds the lock: this process cannot take it until the helper
	// releases it.
	cmd := helperCommand(t, "hold-lock", "VCS_HELPER_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Lock(short, "dev"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock while another process holds it: err = %v, want DeadlineExceeded", err)
	}
	stdin.Close() // tells the helper to unlock and exit
	unlock, err := s.Lock(testCtx(t), "dev")
	if err != nil {
		t.Fatalf("Lock after the helper released it: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}

	// 2. This process holds the lock: the helper cannot take it.
	out, err := helperCommand(t, "try-lock", "VCS_HELPER_DIR="+dir).Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	if string(out) != "busy\n" {
		t.Fatalf("helper took a lock this process holds: %q", out)
	}
	unlock()
	out, err = helperCommand(t, "try-lock", "VCS_HELPER_DIR="+dir).Output()
	if err != nil || string(out) != "acquired\n" {
		t.Fatalf("helper after unlock: %q, %v", out, err)
	}
}

// helperCommand re-executes the test binary to run TestHelperProcess in mode.
func helperCommand(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VCS_CREDSTORE_HELPER="+mode)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestHelperProcess is not a test: it is the other process of the tests above,
// started by helperCommand. It does nothing when run normally.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("VCS_CREDSTORE_HELPER")
	if mode == "" {
		return
	}
	dir := os.Getenv("VCS_HELPER_DIR")
	s := New(Options{Dir: dir, Notice: os.Stderr})
	ctx := context.Background()
	switch mode {
	case "hold-lock":
		unlock, err := s.Lock(ctx, "dev")
		if err != nil {
			helperFail(err)
		}
		os.Stdout.WriteString("locked\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until stdin closes
		unlock()
	case "try-lock":
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		unlock, err := s.Lock(short, "dev")
		switch {
		case err == nil:
			unlock()
			os.Stdout.WriteString("acquired\n")
		case errors.Is(err, context.DeadlineExceeded):
			os.Stdout.WriteString("busy\n")
		default:
			helperFail(err)
		}
	case "no-bus":
		// The real go-keyring backend, with DBUS_SESSION_BUS_ADDRESS pointing nowhere.
		value := os.Getenv("VCS_HELPER_VALUE")
		if err := s.Set(ctx, "dev", KeyTokens, value); err != nil {
			helperFail(err)
		}
		if err := s.Set(ctx, "dev", KeyClientSecret, "cs"); err != nil {
			helperFail(err)
		}
		got, err := s.Get(ctx, "dev", KeyTokens)
		if err != nil {
			helperFail(err)
		}
		if _, err := s.Get(ctx, "other", KeyTokens); !errors.Is(err, ErrNotFound) {
			helperFail(err)
		}
		if got == value {
			os.Stdout.WriteString("same\n")
		} else {
			os.Stdout.WriteString("different\n")
		}
	default:
		helperFail(errors.New("unknown helper mode " + mode))
	}
	os.Exit(0)
}

func helperFail(err error) {
	os.Stderr.WriteString("helper: " + strings.TrimSpace(err.Error()) + "\n")
	os.Exit(3)
}
