package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"
)

// spawner starts child processes from one OS thread that lives as long as
// the host. The kernel sends a child's parent-death signal when the thread
// that forked it exits, not the process; Go may end any thread whose
// goroutine exits while locked to it (as network-namespace code does), so
// runc children forked from an arbitrary thread could be killed at random.
type spawner struct {
	requests chan spawnRequest
	stopped  chan struct{}
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func newSpawner() *spawner {
	s := &spawner{requests: make(chan spawnRequest), stopped: make(chan struct{})}
	go s.loop()
	return s
}

func (s *spawner) loop() {
	// Never unlocked: when the loop ends (Host.Close, after every child is
	// gone) the thread exits with it.
	runtime.LockOSThread()
	for {
		select {
		case r := <-s.requests:
			r.done <- r.cmd.Start()
		case <-s.stopped:
			return
		}
	}
}

// start starts cmd from the spawner's thread with SIGKILL as its
// parent-death signal, so that runc dies with this process, and in a process
// group of its own, so that a terminal's Ctrl-C meant for this process does
// not reach runc (which would pass it on to the container).
func (s *spawner) start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Setpgid = true
	done := make(chan error, 1)
	select {
	case s.requests <- spawnRequest{cmd: cmd, done: done}:
		return <-done
	case <-s.stopped:
		return errors.New("host is closed")
	}
}

// stop ends the thread; call it once.
func (s *spawner) stop() { close(s.stopped) }
