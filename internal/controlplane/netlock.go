package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// nodeNetworkLock is the host-wide lock of local node networks.
const nodeNetworkLock = "/run/lock/ray-operator-node-network.lock"

// NodeNetworkLock is held by the one local cluster whose node network runs
// on this host: its bridge and kube-proxy's nftables table have fixed names,
// so a second one would take over, and on stopping remove, the first one's.
// Whoever creates the bridge must hold the lock from before it creates the
// bridge until after it has removed it.
type NodeNetworkLock struct {
	f *os.File
}

// lockRetryInterval is how often a waiting LockNodeNetwork tries again.
const lockRetryInterval = 200 * time.Millisecond

// LockNodeNetwork takes the host-wide node network lock, waiting while
// another process holds it, until ctx ends.
func LockNodeNetwork(ctx context.Context) (*NodeNetworkLock, error) {
	return lockFile(ctx, nodeNetworkLock)
}

func lockFile(ctx context.Context, path string) (*NodeNetworkLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the lock directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	ticker := time.NewTicker(lockRetryInterval)
	defer ticker.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &NodeNetworkLock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for the node network lock %s (another local cluster with a node network runs): %w", path, ctx.Err())
		case <-ticker.C:
		}
	}
}

// Release releases the lock; nothing to do on nil or once released.
func (l *NodeNetworkLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	return f.Close() // closing the file releases the lock
}
