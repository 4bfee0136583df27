package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/ray-operator/ray-operator/local/internal/pty"
)

// terminal is the node's end of a pty that `runc exec` gets as its standard
// streams when it runs a process with a terminal in the foreground. runc
// receives the container's own pty master through its console socket (which
// runc 1.1 lets a caller hold only with --detach, losing the exit status),
// relays between the two, and on SIGWINCH copies this pty's size to the
// container's. The pty is raw, so the container's line discipline alone
// echoes, edits lines and turns Ctrl-C into SIGINT.
type terminal struct {
	master *os.File
	slave  *os.File // closed once runc has it
	runc   *os.Process
	// copied closes when output has been copied up to runc's end.
	copied chan struct{}
	mu     sync.Mutex // orders resizes
}

// newTerminal opens a raw pty and makes it cmd's standard streams (runc's
// own errors included).
func newTerminal(cmd *exec.Cmd) (*terminal, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, err
	}
	if err := pty.MakeRaw(slave); err != nil {
		_, _ = master.Close(), slave.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	return &terminal{master: master, slave: slave, copied: make(chan struct{})}, nil
}

// started notes runc's process and starts copying output to out: the
// process's stdout and stderr, which a terminal merges.
func (t *terminal) started(runc *os.Process, out io.Writer) {
	_ = t.slave.Close()
	t.runc = runc
	if out == nil {
		out = io.Discard
	}
	go func() {
		defer close(t.copied)
		_, _ = io.Copy(out, t)
	}()
}

// Read implements io.Reader on the master: the pty's EIO once runc's end
// is closed is EOF.
func (t *terminal) Read(p []byte) (int, error) {
	n, err := t.master.Read(p)
	if errors.Is(err, syscall.EIO) {
		err = io.EOF
	}
	return n, err
}

// Write implements io.Writer: input for the process.
func (t *terminal) Write(p []byte) (int, error) { return t.master.Write(p) }

// resize sets the size and tells runc, which resizes the container's pty.
func (t *terminal) resize(size TerminalSize) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := pty.SetSize(t.master, size.Height, size.Width); err != nil {
		return err
	}
	return t.runc.Signal(syscall.SIGWINCH)
}

// follow applies sizes until the channel closes or done does.
func (t *terminal) follow(sizes <-chan TerminalSize, done <-chan struct{}) {
	for {
		select {
		case s, ok := <-sizes:
			if !ok {
				return
			}
			_ = t.resize(s)
		case <-done:
			return
		}
	}
}

// close waits, up to waitDelay, for the output that runc wrote before it
// exited, then closes the master.
func (t *terminal) close() {
	select {
	case <-t.copied:
	case <-time.After(waitDelay):
	}
	_ = t.master.Close()
}

// abort closes both ends when runc did not start.
func (t *terminal) abort() { _, _ = t.master.Close(), t.slave.Close() }
