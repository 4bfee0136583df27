// Package flockwait takes an flock on a file, polling while another
// process holds a conflicting one, until a context ends: what the local
// cluster's machine-wide lock (hostlock) and the e2e suites' wait for a
// background tool build share.
package flockwait

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// PollInterval is how often a waiting Lock tries again.
const PollInterval = 200 * time.Millisecond

// Lock takes an flock of kind how (syscall.LOCK_EX or LOCK_SH) on f,
// polling every PollInterval while another open file holds a conflicting
// one, until ctx ends. onWait, when not nil, is called once if it has to
// wait.
func Lock(ctx context.Context, f *os.File, how int, onWait func()) error {
	ticker := time.NewTicker(PollInterval)
	defer ticker.Stop()
	for waited := false; ; waited = true {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		if !waited && onWait != nil {
			onWait()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the lock on %s: %w", f.Name(), ctx.Err())
		case <-ticker.C:
		}
	}
}
