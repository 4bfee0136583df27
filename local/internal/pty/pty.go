// Package pty opens pseudo-terminals and sets their mode and size, with
// golang.org/x/sys/unix only: the node gives runc one as its standard
// streams for a container with a terminal, and tests drive kubectl through
// one.
package pty

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Open returns the master and slave ends of a new pseudo-terminal.
func Open() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	slave, err = openSlave(master)
	if err != nil {
		_ = master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// openSlave unlocks the slave of master and opens it.
func openSlave(master *os.File) (*os.File, error) {
	var n int
	err := control(master, func(fd int) error {
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return fmt.Errorf("unlocking the pty: %w", err)
		}
		var err error
		if n, err = unix.IoctlGetInt(fd, unix.TIOCGPTN); err != nil {
			return fmt.Errorf("naming the pty: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
}

// MakeRaw puts the terminal of f (either end) in raw mode: no echo, no line
// editing, no signals from control characters, no output processing.
func MakeRaw(f *os.File) error {
	return control(f, func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return err
		}
		return unix.IoctlSetTermios(fd, unix.TCSETS, raw(t))
	})
}

// raw is t in raw mode.
func raw(t *unix.Termios) *unix.Termios {
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	return t
}

// SetSize sets the terminal's size in rows and columns; the kernel sends
// SIGWINCH to the terminal's foreground process group, if it has one.
func SetSize(f *os.File, rows, cols uint16) error {
	return control(f, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	})
}

// control runs f on the descriptor of file without taking it out of the
// runtime's poller (as File.Fd would), so that Close still ends a Read.
func control(file *os.File, f func(fd int) error) error {
	rc, err := file.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
