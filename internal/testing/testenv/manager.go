package testenv

import (
	"context"
	"fmt"
	"os"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Runner runs one controller-runtime manager at a time in the background,
// so that an integration test can stop the operator and start a new one
// (an operator restart) against the same API server.
type Runner struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Start runs mgr until Stop. A manager that exits with an error reports it
// on stderr: the test then fails through whatever it was waiting for.
func (r *Runner) Start(mgr manager.Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()
	r.mu.Lock()
	r.cancel, r.done = cancel, done
	r.mu.Unlock()
}

// Stop stops the running manager, if any, and waits for it to end.
func (r *Runner) Stop() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.cancel, r.done = nil, nil
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
