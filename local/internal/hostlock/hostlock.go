// Package hostlock is the machine-wide lock of the local cluster's node
// network. Some of what that network needs is global to the machine (the
// pod bridge's name, kube-proxy's nftables table, port 53 on the node
// address), so only one process at a time may set it up: whoever holds the
// lock. It is an flock on a file in /run/lock, so it is released when its
// holder exits, however it exits.
package hostlock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"github.com/ray-operator/ray-operator/local/internal/flockwait"
)

// DefaultPath is the lock file.
const DefaultPath = "/run/lock/ray-operator-node-network.lock"

// holders counts the locks this process holds, for Held.
var holders atomic.Int32

// Lock is a held lock.
type Lock struct {
	f        *os.File
	released atomic.Bool
}

// Acquire takes the lock at path, waiting while another process holds it,
// until ctx ends. onWait, when not nil, is called once if it has to wait.
func Acquire(ctx context.Context, path string, onWait func()) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the lock directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := flockwait.Lock(ctx, f, syscall.LOCK_EX, onWait); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("another local cluster runs on this machine: %w", err)
	}
	holders.Add(1)
	return &Lock{f: f}, nil
}

// Release gives the lock up; later calls do nothing.
func (l *Lock) Release() error {
	if l == nil || !l.released.CompareAndSwap(false, true) {
		return nil
	}
	holders.Add(-1)
	return l.f.Close()
}

// Held reports whether this process holds a lock taken with Acquire.
func Held() bool { return holders.Load() > 0 }
