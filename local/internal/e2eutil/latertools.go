package e2eutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/flockwait"
)

// ToolsLockEnv names the lock file that `make test`'s background build of
// the tools only some suites need (Kueue, Traefik: hack/test-stages.sh)
// holds, with an flock, while it runs. Unset, or with no such file, the
// tools were built before the tests (make test-e2e-local alone).
const ToolsLockEnv = "RAY_OPERATOR_TOOLS_LOCK"

// laterTools names the tools of the background build that a cluster with
// these options runs, or "" when it runs none.
func laterTools(o localcluster.Options) string {
	switch {
	case o.Kueue && o.Gateway:
		return "Kueue and Traefik"
	case o.Kueue:
		return "Kueue"
	case o.Gateway:
		return "Traefik"
	}
	return ""
}

// waitLaterTools waits until the background build of the tools the
// cluster runs has ended (its lock is free), calling onWait once when it
// has to wait. A build that failed leaves no binary, which the cluster's
// start then names.
func waitLaterTools(ctx context.Context, o localcluster.Options, onWait func(tools, lock string)) error {
	tools, path := laterTools(o), os.Getenv(ToolsLockEnv)
	if tools == "" || path == "" {
		return nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	began, waited := time.Now(), false
	err = flockwait.Lock(ctx, f, syscall.LOCK_SH, func() {
		waited = true
		if onWait != nil {
			onWait(tools, path)
		}
	})
	if err != nil {
		return fmt.Errorf("waiting for the background build of %s: %w", tools, err)
	}
	if waited {
		fmt.Fprintf(os.Stderr, "the background build of %s ended after %v of waiting\n", tools, time.Since(began).Round(time.Second))
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
