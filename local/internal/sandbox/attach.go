package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
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

// Output packets on conmon's attach socket start with the stream they
// carry (conmon's STDOUT_PIPE and STDERR_PIPE); what a client writes goes
// to the container's stdin as it is.
const (
	attachStdout = 2
	attachStderr = 3
	// attachPacketMax is the largest packet conmon sends (its buffer of
	// 32 KiB plus the stream byte).
	attachPacketMax = 32<<10 + 1
)

// Attach streams the container's output to spec's writers, and spec's
// Stdin to the container's stdin if it has one, until the container ends,
// ctx ends, a write to the client fails or, with a terminal, the client's
// input ends. With StdinOnce (and no terminal), the end of the first
// client's input closes the container's stdin (conmon does that).
func (c *Container) Attach(ctx context.Context, spec AttachSpec) error {
	select {
	case <-c.done:
		return fmt.Errorf("container %s has ended", c.id)
	default:
	}
	conn, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: c.sandbox.host.monitor.attachSocket(c.id), Net: "unixpacket"})
	if err != nil {
		return fmt.Errorf("attach to container %s: %w", c.id, err)
	}
	defer func() { _ = conn.Close() }()
	gone := make(chan struct{})
	var goneOnce sync.Once
	leave := func() { goneOnce.Do(func() { close(gone) }) }
	go func() {
		defer leave()
		copyAttachOutput(conn, spec.Stdout, spec.Stderr)
	}()
	if spec.Stdin != nil {
		go func() {
			_, _ = io.Copy(conn, spec.Stdin)
			if c.tty {
				leave()
				return
			}
			_ = conn.CloseWrite()
		}()
	}
	if c.tty && spec.Resize != nil {
		go c.followResizes(spec.Resize, gone)
	}
	select {
	case <-ctx.Done():
	case <-gone:
	}
	leave()
	return nil
}

// copyAttachOutput copies output packets to their writers until the socket
// ends (conmon closes it when the container has ended and its output is
// drained) or a write fails.
func copyAttachOutput(conn *net.UnixConn, stdout, stderr io.Writer) {
	buf := make([]byte, attachPacketMax)
	for {
		n, err := conn.Read(buf)
		if err != nil || n == 0 {
			return
		}
		w := stdout
		if buf[0] == attachStderr {
			w = stderr
		}
		if w == nil || n == 1 {
			continue
		}
		if _, err := w.Write(buf[1:n]); err != nil {
			return
		}
	}
}

// followResizes passes terminal sizes to conmon through its control FIFO
// in the bundle, until the channel closes or done does.
func (c *Container) followResizes(sizes <-chan TerminalSize, done <-chan struct{}) {
	for {
		select {
		case s, ok := <-sizes:
			if !ok {
				return
			}
			_ = c.resize(s)
		case <-done:
			return
		}
	}
}

// resize asks conmon to set the container's terminal size.
func (c *Container) resize(s TerminalSize) error {
	f, err := os.OpenFile(filepath.Join(c.dir, "ctl"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	_, err = fmt.Fprintf(f, "%d %d %d\n", resizeEvent, s.Height, s.Width)
	return err
}

// resizeEvent is conmon's control message type for a terminal resize.
const resizeEvent = 1

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
