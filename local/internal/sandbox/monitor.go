package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultConmonBinary is the container monitor the host runs each container
// under (Debian's conmon package).
const DefaultConmonBinary = "conmon"

// A container runs under its own conmon, the monitor CRI-O and Podman use:
// conmon leaves its starter's process tree (it forks twice and is a session
// of its own), runs `runc create`, writes the container's output to the CRI
// log, serves attach on a unix socket in the bundle and, when the container
// ends, writes its exit status to a file named by the container's id. So a
// container outlives the process that started it, and whoever comes next
// finds it through runc's state root, the attach socket and the exit file.

// monitorPaths are where a container's conmon keeps what outlives the
// node: its attach socket (through a short symlink to the bundle), the
// exit file and its own pid file.
type monitorPaths struct {
	socketDir string // conmon makes socketDir/<id> a symlink to the bundle
	exitDir   string // conmon writes exitDir/<id>
}

func (n names) monitorPaths() monitorPaths {
	return monitorPaths{socketDir: filepath.Join(n.runDir(), "attach"), exitDir: filepath.Join(n.runDir(), "exits")}
}

func (p monitorPaths) make() error {
	for _, d := range []string{p.socketDir, p.exitDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

func (p monitorPaths) exitFile(id string) string { return filepath.Join(p.exitDir, id) }

// attachSocket is the socket conmon serves attach on (bound through the
// symlink, so the socket file itself lives in the bundle).
func (p monitorPaths) attachSocket(id string) string {
	return filepath.Join(p.socketDir, id, "attach")
}

// monitorArgs is conmon's command line for one container.
func (c *Container) monitorArgs(spec ContainerSpec) []string {
	h := c.sandbox.host
	logPath := spec.LogPath
	if logPath == "" {
		logPath = os.DevNull
	}
	args := []string{
		"--api-version", "1",
		"--cid", c.id, "--cuuid", c.id, "--name", c.id,
		"--runtime", h.runc.binary, "--runtime-arg", "--root=" + h.runc.root,
		"--bundle", c.dir,
		"--container-pidfile", filepath.Join(c.dir, "pid"),
		"--conmon-pidfile", filepath.Join(c.dir, "conmon.pid"),
		"--log-path", "k8s-file:" + logPath,
		"--exit-dir", h.monitor.exitDir,
		"--socket-dir-path", h.monitor.socketDir,
		"--log-level", "error",
	}
	if spec.TTY {
		args = append(args, "--terminal")
	}
	if spec.OpenStdin {
		args = append(args, "--stdin")
		if !spec.StdinOnce {
			args = append(args, "--leave-stdin-open")
		}
	}
	return args
}

// createUnderMonitor starts conmon, which runs `runc create`, and returns
// the container's pid once runc has created it (not yet started).
func (c *Container) createUnderMonitor(ctx context.Context, spec ContainerSpec) (int, error) {
	h := c.sandbox.host
	if err := os.Remove(h.monitor.exitFile(c.id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	syncR, syncW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer func() { _ = syncR.Close() }()
	cmd := exec.CommandContext(ctx, h.cfg.ConmonBinary, c.monitorArgs(spec)...)
	// conmon runs runc by its absolute path; the environment is only what
	// conmon itself reads.
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "_OCI_SYNCPIPE=3"}
	cmd.ExtraFiles = []*os.File{syncW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	_ = syncW.Close()
	if err != nil {
		return 0, fmt.Errorf("conmon: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	// The daemonized conmon holds the pipe's write end until it reports.
	stop := context.AfterFunc(ctx, func() { _ = syncR.SetReadDeadline(time.Now()) })
	defer stop()
	return readSyncPid(syncR)
}

// syncMessage is what conmon writes to its sync pipe once `runc create` is
// done: the container's pid, or -1 and runc's error.
type syncMessage struct {
	Data    int    `json:"data"`
	Message string `json:"message"`
}

func readSyncPid(r *os.File) (int, error) {
	line, err := bufio.NewReader(r).ReadBytes('\n')
	if err != nil {
		return 0, fmt.Errorf("conmon reported nothing: %w", err)
	}
	var m syncMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return 0, fmt.Errorf("conmon's report %q: %w", line, err)
	}
	if m.Data <= 0 {
		return 0, fmt.Errorf("runc create: %s", strings.TrimSpace(m.Message))
	}
	return m.Data, nil
}

// readExitFile reads the status conmon wrote for a container: its exit
// code, 128+signal for one killed by a signal.
func readExitFile(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return -1, err
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return -1, fmt.Errorf("exit file %s: %w", path, err)
	}
	return code, nil
}

// exitWatcher tells containers when conmon has written their exit files:
// one inotify watch on the exit directory for the whole host, since each
// inotify instance counts against a per-user limit (128 by default).
type exitWatcher struct {
	dir     string
	w       *fsnotify.Watcher
	mu      sync.Mutex
	waiters map[string]chan struct{}
	stopped chan struct{}
}

func newExitWatcher(dir string) (*exitWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return nil, err
	}
	x := &exitWatcher{dir: dir, w: w, waiters: map[string]chan struct{}{}, stopped: make(chan struct{})}
	go x.loop()
	return x, nil
}

func (x *exitWatcher) loop() {
	defer close(x.stopped)
	for {
		select {
		case ev, ok := <-x.w.Events:
			if !ok {
				return
			}
			x.check(filepath.Base(ev.Name))
		case _, ok := <-x.w.Errors:
			if !ok {
				return
			}
			// An overflow loses events: look at every waiter again.
			x.checkAll()
		}
	}
}

// expect returns a channel that closes once the exit file of id exists.
func (x *exitWatcher) expect(id string) <-chan struct{} {
	x.mu.Lock()
	ch, ok := x.waiters[id]
	if !ok {
		ch = make(chan struct{})
		x.waiters[id] = ch
	}
	x.mu.Unlock()
	x.check(id)
	return ch
}

func (x *exitWatcher) check(id string) {
	if _, err := os.Stat(filepath.Join(x.dir, id)); err != nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if ch, ok := x.waiters[id]; ok {
		close(ch)
		delete(x.waiters, id)
	}
}

func (x *exitWatcher) checkAll() {
	x.mu.Lock()
	ids := make([]string, 0, len(x.waiters))
	for id := range x.waiters {
		ids = append(ids, id)
	}
	x.mu.Unlock()
	for _, id := range ids {
		x.check(id)
	}
}

// close stops watching; channels not yet closed stay open.
func (x *exitWatcher) close() error {
	err := x.w.Close()
	<-x.stopped
	return err
}
