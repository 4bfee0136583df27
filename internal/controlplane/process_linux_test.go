package controlplane

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestComponentOutlivesTheThreadThatStartedIt: a component started from a
// goroutine whose thread then ends (a goroutine locked to it returned, as
// code entering a network namespace does) keeps running: its Pdeathsig
// must follow this process, not that thread. The component is stopped by
// stop's SIGTERM, not by the kernel's SIGKILL.
func TestComponentOutlivesTheThreadThatStartedIt(t *testing.T) {
	type started struct {
		p   *process
		tid int
		err error
	}
	ch := make(chan started, 1)
	release := make(chan struct{})
	defer close(release)
	var start func()
	start = func() {
		runtime.LockOSThread()
		if syscall.Gettid() == os.Getpid() {
			// Go never ends the main thread (it parks it instead): keep
			// it locked here, so that the next try runs on another.
			go start()
			<-release
			runtime.UnlockOSThread()
			return
		}
		// Never unlocked: the thread ends when this returns.
		p, err := startProcess("sleeper", "/bin/sleep", []string{"600"}, nil, t.TempDir(), nil)
		ch <- started{p: p, tid: syscall.Gettid(), err: err}
	}
	go start()
	s := <-ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { _ = s.p.stop() })

	// The kernel sends the Pdeathsig while the thread exits, before its
	// /proc entry goes.
	task := filepath.Join("/proc/self/task", strconv.Itoa(s.tid))
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := os.Stat(task)
		return errors.Is(err, os.ErrNotExist), nil
	})
	if err != nil {
		t.Fatalf("thread %d did not end: %v", s.tid, err)
	}

	if err := s.p.stop(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if !errors.As(s.p.err, &exit) {
		t.Fatalf("the component's exit: %v, want one by a signal", s.p.err)
	}
	status, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !status.Signaled() || status.Signal() != syscall.SIGTERM {
		t.Errorf("the component ended by %v, want stop's SIGTERM (SIGKILL: the kernel killed it when the thread that started it ended)", exit)
	}
}
