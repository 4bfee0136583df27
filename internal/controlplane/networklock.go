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

// nodeNetworkLockPath is the machine-wide lock of local clusters with a
// node network.
const nodeNetworkLockPath = "/run/lock/ray-operator-node-network.lock"

// NodeNetworkLock is the machine-wide lock that one local cluster with a
// node network holds for its whole life: kube-proxy's nftables table and
// CoreDNS's port have fixed names, and so do the local node's bridge and
// pod network (sandbox.NewHost sweeps and recreates them). Whoever sets up
// any of these must hold it first, or a second cluster starting on the
// machine tears down the network of the one that runs.
type NodeNetworkLock struct{ f *os.File }

// LockNodeNetwork waits until no other process holds the node network
// lock, takes it and returns it; ctx bounds the wait. Release it after the
// last shared object is gone.
func LockNodeNetwork(ctx context.Context) (*NodeNetworkLock, error) {
	return lockNodeNetworkAt(ctx, nodeNetworkLockPath, pollInterval)
}

// lockNodeNetworkAt takes the flock of the file at path, polling every
// interval.
func lockNodeNetworkAt(ctx context.Context, path string, interval time.Duration) (*NodeNetworkLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the lock directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		// A flock belongs to the open file: a second LockNodeNetwork in the
		// same process waits as one in another process does.
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

// Release releases the lock; a second call does nothing.
func (l *NodeNetworkLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	return f.Close() // closing the file releases the flock
}

// lockNodeNetwork takes the node network lock for a control plane with a
// network whose caller does not hold it yet, and arranges for Stop to
// release it. Nothing to do without a network.
func (cp *ControlPlane) lockNodeNetwork(ctx context.Context, n *NodeNetwork) error {
	if n == nil || n.Lock != nil {
		return nil
	}
	lock, err := LockNodeNetwork(ctx)
	if err != nil {
		return err
	}
	cp.atStop(lock.Release)
	return nil
}
