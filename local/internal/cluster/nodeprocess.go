package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/local/internal/node"
)

// The node agent runs in a process of its own, as a kubelet does: the
// cluster's process starts its own executable again with the arguments
// nodeProcessArg and the node's configuration file, and RunNodeIfChild,
// called first in that executable's main (or TestMain), runs the node
// instead. Killing it
// leaves the pods' containers running under their conmon; a node process
// started again adopts them.
const (
	// nodeProcessArg, the first argument, makes an executable the node
	// process; the second is its configuration file.
	nodeProcessArg = "ray-local-node-process"
	// nodeReadyFD is the descriptor on which the node process writes
	// nodeReadyLine once its Node is Ready.
	nodeReadyFD   = 3
	nodeReadyLine = "ready"
)

// childHook is set by RunNodeIfChild: without it, starting this executable
// again would not run a node.
var childHook atomic.Bool

// nodeProcessConfig is what the cluster's process tells the node process,
// as JSON in <StateDir>/node-process.json.
type nodeProcessConfig struct {
	node.Settings
	// Kubeconfig is the admin kubeconfig; QPS and Burst its client's.
	Kubeconfig string
	QPS        float32
	Burst      int
	// HostStateDir is the sandbox host's state directory; the pods'
	// network (sandbox.Network) is the cluster's.
	HostStateDir string
	// RayVenvDir and RedisServer are what Ray and Redis images run;
	// RayInstaller installs other Ray releases (Options.RayInstaller).
	RayVenvDir, RedisServer, RayInstaller string
	// Adopt takes over the sandboxes an earlier node process left.
	Adopt bool
}

// nodeProcess is a running node process.
type nodeProcess struct {
	pid     int
	logPath string
	done    chan struct{} // closed once the process has exited
	err     error         // its exit, valid after done is closed
	ended   atomic.Bool   // kill or stop was called: an exit is expected
}

// died returns a channel that gets the process's exit error if it exits
// without kill or stop, and is closed once it exited.
func (p *nodeProcess) died() <-chan error {
	out := make(chan error, 1)
	go func() {
		<-p.done
		if !p.ended.Load() {
			out <- p.exitError()
		}
		close(out)
	}()
	return out
}

// nodeStopGrace bounds the node process's clean stop (every pod stopped
// as its deletion would) before it is killed.
const nodeStopGrace = 2 * time.Minute

// startNodeProcess writes cfg to dir and starts the node process; it
// returns once the process says the Node is Ready, or fails with the end
// of its log. Its output goes to <dir>/node.log and, prefixed, to
// log when it is not nil. The process gets SIGTERM, and stops its pods,
// if this one dies without stopping it.
func startNodeProcess(ctx context.Context, dir string, cfg nodeProcessConfig, log io.Writer) (*nodeProcess, error) {
	if !childHook.Load() {
		return nil, errors.New("the local node runs as a process of this executable: call cluster.RunNodeIfChild first in main (or TestMain)")
	}
	confPath := filepath.Join(dir, "node-process.json")
	if err := writeJSON(confPath, cfg); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &nodeProcess{logPath: nodeLogPath(dir), done: make(chan struct{})}
	out, err := openLog(p.logPath, log)
	if err != nil {
		return nil, err
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		_ = out.Close()
		return nil, err
	}
	defer func() { _ = readyR.Close() }()
	cmd := exec.Command(exe, nodeProcessArg, confPath)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{readyW} // descriptor 3 in the child
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := p.run(cmd, out); err != nil {
		_ = readyW.Close()
		return nil, err
	}
	_ = readyW.Close()
	if err := p.waitReady(ctx, readyR); err != nil {
		return nil, errors.Join(err, p.kill())
	}
	return p, nil
}

// run starts cmd and waits for it in a goroutine locked to the thread that
// started it: the kernel sends Pdeathsig when the thread that forked the
// child ends, not the process, and a Go thread ends whenever a goroutine
// locked to it returns (code that enters network namespaces does so on
// purpose), so the forking thread stays locked for the child's life.
func (p *nodeProcess) run(cmd *exec.Cmd, out io.WriteCloser) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		err := cmd.Start()
		started <- err
		if err == nil {
			p.err = cmd.Wait()
		}
		_ = out.Close()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("starting the node process: %w", err)
	}
	p.pid = cmd.Process.Pid
	return nil
}

// waitReady waits for the ready line on r, the process's exit or ctx.
func (p *nodeProcess) waitReady(ctx context.Context, r *os.File) error {
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ready <- line == nodeReadyLine+"\n"
	}()
	select {
	case ok := <-ready:
		if ok {
			return nil
		}
		<-p.done
		return p.exitError()
	case <-p.done:
		return p.exitError()
	case <-ctx.Done():
		return fmt.Errorf("waiting for the node process to be Ready: %w", ctx.Err())
	}
}

// exitError describes the process's exit, with the end of its log.
func (p *nodeProcess) exitError() error {
	return fmt.Errorf("the node process exited (%v); last lines of %s:\n%s", p.err, p.logPath, controlplane.LogTail(p.logPath, 30))
}

// kill sends SIGKILL to the node process's group (the node and any runc
// command it ran; conmon and the containers are in sessions of their own)
// and waits for it to exit.
func (p *nodeProcess) kill() error {
	p.ended.Store(true)
	if err := syscall.Kill(-p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing the node process: %w", err)
	}
	<-p.done
	return nil
}

// stop sends SIGTERM, which makes the node stop its pods and remove their
// sandboxes, and waits; after ctx or nodeStopGrace it kills the process.
func (p *nodeProcess) stop(ctx context.Context) error {
	p.ended.Store(true)
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping the node process: %w", err)
	}
	timer := time.NewTimer(nodeStopGrace)
	defer timer.Stop()
	select {
	case <-p.done:
		if p.err != nil {
			return p.exitError()
		}
		return nil
	case <-ctx.Done():
	case <-timer.C:
	}
	return errors.Join(errors.New("the node process did not stop in time: killed, its pods may run on until the next start sweeps them"), p.kill())
}

// nodeLogPath is the node process's log in the cluster's state directory,
// beside the control plane's.
func nodeLogPath(stateDir string) string { return filepath.Join(stateDir, "node.log") }

// openLog opens the node's log for appending (a restarted node's lines
// follow the earlier ones), teed with a prefix to log when it is not nil.
func openLog(path string, log io.Writer) (io.WriteCloser, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if log == nil {
		return f, nil
	}
	return teeCloser{Writer: io.MultiWriter(f, controlplane.PrefixLines("node | ", log)), Closer: f}, nil
}

type teeCloser struct {
	io.Writer
	io.Closer
}

// writeJSON writes v to path through a temporary file.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp." + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
