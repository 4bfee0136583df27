package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrTTYNotSupported is returned by Exec for ExecSpec.TTY.
var ErrTTYNotSupported = errors.New("exec with a TTY is not supported by the local node")

// ExecSpec describes a process to run in a running container.
type ExecSpec struct {
	// Args is argv; argv[0] is looked up in the container's PATH.
	Args []string
	// Env is added to the container's environment (KEY=VALUE).
	Env []string
	// WorkingDir defaults to the container's.
	WorkingDir string
	// Stdin, Stdout and Stderr are the process's standard streams; nil
	// means /dev/null.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// TTY asks for a terminal; not supported (ErrTTYNotSupported).
	TTY bool
	// Resize carries terminal sizes for a TTY.
	Resize <-chan TerminalSize
}

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	// Width and Height are the columns and rows.
	Width, Height uint16
}

// Exec runs a process in the running container's namespaces (`runc exec`)
// and returns its exit code. When ctx ends first, runc exec is killed (the
// process it started is not) and ctx's error is returned.
func (c *Container) Exec(ctx context.Context, spec ExecSpec) (int, error) {
	if spec.TTY {
		return -1, ErrTTYNotSupported
	}
	if len(spec.Args) == 0 {
		return -1, errors.New("exec: no command")
	}
	select {
	case <-c.done:
		return -1, fmt.Errorf("container %s has ended", c.id)
	default:
	}
	args := []string{"exec"}
	if spec.WorkingDir != "" {
		args = append(args, "--cwd", spec.WorkingDir)
	}
	for _, kv := range spec.Env {
		args = append(args, "--env", kv)
	}
	args = append(append(args, c.id), spec.Args...)
	cmd := c.sandbox.host.runc.command(args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
	cmd.WaitDelay = waitDelay
	if err := c.sandbox.host.spawner.start(cmd); err != nil {
		return -1, fmt.Errorf("start runc exec: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	err := cmd.Wait()
	if ctx.Err() != nil {
		return -1, ctx.Err()
	}
	code := exitCode(cmd, err)
	if code < 0 {
		return -1, fmt.Errorf("runc exec: %w", err)
	}
	return code, nil
}
