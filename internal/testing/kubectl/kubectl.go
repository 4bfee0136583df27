// Package kubectl runs the real kubectl that hack/k8s-binaries.sh builds,
// against a kubeconfig, for tests that act as a user at a terminal.
package kubectl

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// waitDelay bounds how long a canceled kubectl may hold its output pipes.
const waitDelay = time.Second

// Command is kubectl with --kubeconfig and args, not started.
func Command(ctx context.Context, kubeconfig string, args ...string) (*exec.Cmd, error) {
	dir, err := controlplane.BinDir()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.WaitDelay = waitDelay
	return cmd, nil
}

// Run runs kubectl and returns what it printed on stdout; the error carries
// its output.
func Run(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	cmd, err := Command(ctx, kubeconfig, args...)
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}
