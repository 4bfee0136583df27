package controlplane

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestLockFileIsExclusiveUntilReleased: a second holder waits while the
// first holds the lock (here until its context ends), and gets it once the
// first has released it; releasing twice is harmless.
func TestLockFileIsExclusiveUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "net.lock")
	first, err := lockFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*lockRetryInterval)
	defer cancel()
	if second, err := lockFile(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		_ = second.Release()
		t.Fatalf("second lock while the first is held: %v, want a deadline error", err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(lockRetryInterval) // the second holder is waiting by then
		released <- first.Release()
	}()
	second, err := lockFile(t.Context(), path)
	if err != nil {
		t.Fatalf("second lock after the first was released: %v", err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if err := second.Release(); err != nil {
		t.Fatal(err)
	}
	if err := second.Release(); err != nil {
		t.Fatalf("releasing twice: %v", err)
	}
}
