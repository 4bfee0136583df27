package testenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// guardScript kills the process groups given as arguments when the shell
// gets SIGTERM, which the kernel sends when the test process dies. It says
// "armed" once its trap is set: a SIGTERM before that would end the shell
// without killing anything.
const guardScript = `trap 'for p; do kill -9 "-$p"; done 2>/dev/null; kill $! 2>/dev/null; exit 0' TERM
echo armed
sleep 2147483647 & wait`

// guardChildren makes sure the processes this test binary started from
// binDir (envtest's etcd and kube-apiserver) die with it. envtest stops them
// in Stop, but a test timeout panics and skips every cleanup, which would
// leave them running. It returns a function that removes the guard once
// they were stopped normally.
func guardChildren(binDir string) (func(), error) {
	pids, err := childrenFrom(binDir)
	if err != nil || len(pids) == 0 {
		return func() {}, err
	}
	args := append([]string{"-c", guardScript, "testenv-guard"}, pids...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	waited, err := startOnOwnThread(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting the control-plane guard: %w", err)
	}
	// Wait for the trap: a test process killed before the shell has set it
	// (seen on a loaded machine: etcd and kube-apiserver outlived it) would
	// end the guard with nothing killed.
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = out.Close()
	if err != nil || line != "armed\n" {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
		return nil, fmt.Errorf("the control-plane guard did not start (%q): %v", line, err)
	}
	return func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
	}, nil
}

// startOnOwnThread starts cmd from a goroutine locked to its thread for as
// long as cmd runs, and waits for it there; the returned channel is closed
// when it has ended. The kernel sends Pdeathsig when the thread that forked
// the child ends, not the process, and Go ends a thread whenever a goroutine
// locked to it returns: started from any thread, the guard could take the
// control plane down in the middle of a suite (internal/controlplane starts
// its components the same way for the same reason).
func startOnOwnThread(cmd *exec.Cmd) (<-chan struct{}, error) {
	started := make(chan error, 1)
	waited := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(waited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waited, nil
}

// childrenFrom lists the pids of this process's children whose executable
// lies in dir. envtest starts each in its own process group, so a pid is
// also its group id.
func childrenFrom(dir string) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	self := os.Getpid()
	var pids []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || parentOf(pid) != self {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && filepath.Dir(exe) == filepath.Clean(dir) {
			pids = append(pids, e.Name())
		}
	}
	return pids, nil
}

// parentOf returns the parent pid of pid, or -1 when it cannot be read.
func parentOf(pid int) int {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// The command name in parentheses may contain spaces; fields follow it.
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return ppid
}
