package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// AttachSpec is one client attached to a running container (kubectl
// attach).
type AttachSpec struct {
	// Stdin is copied to the container's stdin when it has one
	// (ContainerSpec.OpenStdin); nil attaches output only.
	Stdin io.Reader
	// Stdout and Stderr receive the container's output from now on (with a
	// terminal, all of it goes to Stdout); nil skips a stream.
	Stdout, Stderr io.Writer
	// Resize carries terminal sizes for a container with a terminal.
	Resize <-chan TerminalSize
}

// stdio is the node's side of the standard streams of a container that can
// be attached to: output goes to the log and to every attached client, and
// input comes from the attached clients.
type stdio struct {
	stdout, stderr *fanout
	stdin          io.WriteCloser // nil without OpenStdin
	stdinOnce      bool
	term           *terminal // nil without TTY
	closeOnce      sync.Once
}

// newStdio sets up cmd's (`runc run`'s) standard streams for spec.
func newStdio(cmd *exec.Cmd, spec ContainerSpec) (*stdio, error) {
	s := &stdio{stdout: &fanout{log: spec.Stdout}, stderr: &fanout{log: spec.Stderr}, stdinOnce: spec.StdinOnce}
	if spec.TTY {
		term, err := newTerminal(cmd)
		if err != nil {
			return nil, fmt.Errorf("container terminal: %w", err)
		}
		s.term = term
		if spec.OpenStdin {
			s.stdin = nopCloser{term}
		}
		return s, nil
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, s.stdout, s.stderr
	if spec.OpenStdin {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdin, s.stdin = r, w
	}
	return s, nil
}

// started lets go of what runc now holds and starts copying a terminal's
// output.
func (s *stdio) started(cmd *exec.Cmd) {
	if s.term != nil {
		s.term.started(cmd.Process, s.stdout)
		return
	}
	if r, ok := cmd.Stdin.(*os.File); ok && s.stdin != nil {
		_ = r.Close()
	}
}

// abort releases everything when runc did not start.
func (s *stdio) abort(cmd *exec.Cmd) {
	if r, ok := cmd.Stdin.(*os.File); ok && s.stdin != nil && s.term == nil {
		_ = r.Close()
	}
	if s.term != nil {
		s.term.abort()
	}
	s.closeStdin()
}

// close waits for a terminal's last output and closes what the node holds
// once runc has exited.
func (s *stdio) close() {
	if s.term != nil {
		s.term.close()
	}
	s.closeStdin()
}

func (s *stdio) closeStdin() {
	s.closeOnce.Do(func() {
		if s.stdin != nil {
			_ = s.stdin.Close()
		}
	})
}

// Attach streams the container's output to spec's writers, and spec's
// Stdin to the container's stdin if it has one, until the container ends,
// ctx ends, a write to the client fails or, with a terminal, the client's
// input ends. With StdinOnce (and no terminal), the end of the first
// client's input closes the container's stdin.
func (c *Container) Attach(ctx context.Context, spec AttachSpec) error {
	select {
	case <-c.done:
		return fmt.Errorf("container %s has ended", c.id)
	default:
	}
	s := c.stdio
	gone := make(chan struct{})
	var goneOnce sync.Once
	leave := func() { goneOnce.Do(func() { close(gone) }) }
	defer s.stdout.add(spec.Stdout, leave)()
	defer s.stderr.add(spec.Stderr, leave)()
	if spec.Stdin != nil && s.stdin != nil {
		go func() {
			_, _ = io.Copy(s.stdin, spec.Stdin)
			if s.stdinOnce && s.term == nil {
				s.closeStdin()
			}
			if s.term != nil {
				leave()
			}
		}()
	}
	if s.term != nil && spec.Resize != nil {
		go s.term.follow(spec.Resize, gone)
	}
	select {
	case <-c.exited:
		// The output up to runc's exit reaches the client before it goes.
		<-c.done
	case <-ctx.Done():
	case <-gone:
	}
	leave()
	return nil
}

// fanout writes a container's stream to its log and to the attached
// clients; a client whose write fails is dropped. A client that stops
// reading without going away holds the stream back until its connection's
// flow control gives up.
type fanout struct {
	log     io.Writer
	mu      sync.Mutex
	clients []*client
}

type client struct {
	w     io.Writer
	leave func()
}

// add attaches w (nil: nothing) and returns the function that detaches it;
// leave is called when a write to w fails.
func (f *fanout) add(w io.Writer, leave func()) func() {
	if w == nil {
		return func() {}
	}
	c := &client{w: w, leave: leave}
	f.mu.Lock()
	f.clients = append(f.clients, c)
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.clients = slices.DeleteFunc(f.clients, func(o *client) bool { return o == c })
	}
}

// Write implements io.Writer: the log's error is the result.
func (f *fanout) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clients = slices.DeleteFunc(f.clients, func(c *client) bool {
		if _, err := c.w.Write(p); err != nil {
			c.leave()
			return true
		}
		return false
	})
	if f.log == nil {
		return len(p), nil
	}
	return f.log.Write(p)
}

// nopCloser is a terminal as a container's stdin: closing it would end the
// terminal's output too.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// withTerm adds TERM=xterm to env unless it sets TERM, as container
// runtimes do for a process with a terminal.
func withTerm(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "TERM=") {
			return env
		}
	}
	return append(slices.Clone(env), "TERM=xterm")
}
