package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// runcCLI runs the runc binary with the host's own state root.
type runcCLI struct {
	binary string
	root   string
}

// command is an unstarted `runc --root <root> <args...>`.
func (r runcCLI) command(args ...string) *exec.Cmd {
	return exec.Command(r.binary, append([]string{"--root", r.root}, args...)...)
}

// output runs a short runc command and returns its stdout; its stderr is in
// the error.
func (r runcCLI) output(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, r.binary, append([]string{"--root", r.root}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("runc %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// listAttempts bounds how often list asks runc again after a container's
// state vanished while runc listed the root.
const listAttempts = 5

// list returns the ids of every container in the state root. runc reads
// the root's entries and then each one's state, and fails the whole list
// when a container is deleted in between (a container's monitor deletes its
// state once it has recorded the exit): that failure is asked again.
func (r runcCLI) list(ctx context.Context) ([]string, error) {
	var err error
	for range listAttempts {
		var out string
		if out, err = r.output(ctx, "list", "--quiet"); err == nil {
			return strings.Fields(out), nil
		}
		if !strings.Contains(err.Error(), "no such file or directory") {
			return nil, err
		}
	}
	return nil, err
}

// kill sends sig to the container's init process.
func (r runcCLI) kill(ctx context.Context, id string, sig syscall.Signal) error {
	_, err := r.output(ctx, "kill", id, strconv.Itoa(int(sig)))
	return err
}

// forceDelete kills whatever still runs in the container and deletes its
// state and cgroup.
func (r runcCLI) forceDelete(ctx context.Context, id string) error {
	_, err := r.output(ctx, "delete", "--force", id)
	return err
}
