package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a component gets to exit after SIGTERM before its
// whole process group is killed.
const stopGrace = 10 * time.Second

// process is one running component, in its own process group so that
// stopping it also stops anything it started.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	logFile *os.File
	done    chan struct{} // closed when the process has exited
	err     error         // exit error, valid after done is closed
}

// startProcess runs path with args and this process's environment plus
// env; its output goes to <logDir>/<name>.log and, prefixed with the name,
// to log when it is not nil. The child gets SIGKILL if this process dies
// without stopping it.
func startProcess(name, path string, args, env []string, logDir string, log io.Writer) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log file for %s: %w", name, err)
	}
	var out io.Writer = logFile
	if log != nil {
		out = io.MultiWriter(logFile, PrefixLines(name+" | ", log))
	}
	cmd := exec.Command(path, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = procAttr()
	p := &process{name: name, logPath: logPath, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	if err := p.run(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, path, err)
	}
	return p, nil
}

// run starts the command and waits for it in a goroutine locked to the
// thread that forked it. The kernel sends the child's Pdeathsig when that
// thread ends, not this process, and Go ends a thread whenever a goroutine
// locked to it returns (code entering network namespaces does so on
// purpose): started from any thread, a component could be SIGKILLed in the
// middle of a run (a local cluster's kube-scheduler and
// kube-controller-manager vanished together, without a log line, after a
// node restart). Locked here, the thread lives as long as the child.
func (p *process) run() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = p.cmd.Wait()
		_ = p.logFile.Close()
		close(p.done)
	}()
	return <-started
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes an unexpected exit, with the end of the log.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited (%v); last log lines from %s:\n%s", p.name, p.err, p.logPath, LogTail(p.logPath, 20))
}

// stop sends SIGTERM to the process group, then SIGKILL after stopGrace,
// and waits for the process to exit.
func (p *process) stop() error {
	if p.exited() {
		return nil
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Children that outlived the leader still belong to the group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return nil
}

// LogTail returns the last n lines of a file, or a note when it cannot be
// read.
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// PrefixLines returns a writer that writes whole lines to w, each starting
// with prefix, for a component's output in a log that several share. It is
// safe for concurrent use.
func PrefixLines(prefix string, w io.Writer) io.Writer {
	return &prefixWriter{prefix: prefix, w: w}
}

// prefixWriter is PrefixLines' writer.
type prefixWriter struct {
	prefix string
	w      io.Writer
	mu     sync.Mutex
	buf    []byte
}

// Write implements io.Writer.
func (pw *prefixWriter) Write(b []byte) (int, error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.buf = append(pw.buf, b...)
	for {
		i := bytes.IndexByte(pw.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := pw.prefix + string(pw.buf[:i+1])
		pw.buf = pw.buf[i+1:]
		if _, err := io.WriteString(pw.w, line); err != nil {
			return len(b), err
		}
	}
}
