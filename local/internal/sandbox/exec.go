package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

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
	// TTY gives the process a terminal: Stdin feeds it, Stdout receives
	// what the process writes to it (stdout and stderr merged, as with any
	// terminal) and Stderr is unused.
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
	if len(spec.Args) == 0 {
		return -1, errors.New("exec: no command")
	}
	select {
	case <-c.done:
		return -1, fmt.Errorf("container %s has ended", c.id)
	default:
	}
	cmd := c.sandbox.host.runc.command(execArgs(c.id, spec)...)
	cmd.WaitDelay = waitDelay
	if spec.TTY {
		return c.execTTY(ctx, cmd, spec)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
	if err := c.sandbox.host.spawner.start(cmd); err != nil {
		return -1, fmt.Errorf("start runc exec: %w", err)
	}
	return waitExec(ctx, cmd)
}

// execArgs are the arguments of `runc exec` for spec in container id; a
// process with a terminal gets TERM, as container runtimes give it.
func execArgs(id string, spec ExecSpec) []string {
	args, env := []string{"exec"}, spec.Env
	if spec.TTY {
		args, env = append(args, "--tty"), withTerm(env)
	}
	if spec.WorkingDir != "" {
		args = append(args, "--cwd", spec.WorkingDir)
	}
	for _, kv := range env {
		args = append(args, "--env", kv)
	}
	return append(append(args, id), spec.Args...)
}

// execTTY runs `runc exec --tty` on a terminal of the node's: Stdin is
// copied to it, its output to Stdout, Resize applied to it.
func (c *Container) execTTY(ctx context.Context, cmd *exec.Cmd, spec ExecSpec) (int, error) {
	term, err := newTerminal(cmd)
	if err != nil {
		return -1, fmt.Errorf("exec with a TTY: %w", err)
	}
	if err := c.sandbox.host.spawner.start(cmd); err != nil {
		term.abort()
		return -1, fmt.Errorf("start runc exec: %w", err)
	}
	term.started(cmd.Process, spec.Stdout)
	defer term.close()
	if spec.Stdin != nil {
		go func() { _, _ = io.Copy(term, spec.Stdin) }()
	}
	if spec.Resize != nil {
		go term.follow(spec.Resize, term.copied)
	}
	return waitExec(ctx, cmd)
}

// waitExec waits for a started runc exec and returns its exit code; when
// ctx ends first, it kills runc and returns ctx's error.
func waitExec(ctx context.Context, cmd *exec.Cmd) (int, error) {
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

// waitDelay bounds how long a finished runc exec waits for its output to be
// copied (and for a caller's Stdin reader to give up).
const waitDelay = 5 * time.Second

// exitCode is a runc exec's exit status as Kubernetes reports it: runc
// passes on its process' status (128+signal for a killed one); a runc
// killed by a signal itself counts the same way.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return cmd.ProcessState.ExitCode()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	default:
		return ws.ExitStatus()
	}
}
