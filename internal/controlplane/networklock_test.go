package controlplane

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestNodeNetworkLock: a second taker, in the same process as in another,
// waits until the holder releases the lock.
func TestNodeNetworkLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock", "node-network.lock")
	held, err := lockNodeNetworkAt(t.Context(), path, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := lockNodeNetworkAt(ctx, path, time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("taking a held lock: got %v, want it to wait until the deadline", err)
	}
	taken := make(chan error, 1)
	go func() {
		second, err := lockNodeNetworkAt(t.Context(), path, time.Millisecond)
		if err == nil {
			err = second.Release()
		}
		taken <- err
	}()
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-taken; err != nil {
		t.Fatalf("taking the released lock: %v", err)
	}
	if err := held.Release(); err != nil {
		t.Errorf("a second Release: %v", err)
	}
}
