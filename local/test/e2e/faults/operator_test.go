package faults_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// operatorArgs are the flags of `make run`'s operator against its own
// cluster (local/test/e2e/cluster starts it in-process with the same):
// dashboards through the API server's proxy, errors on stdout and
// everything in the log file.
//
// Leader election is off: the test never runs two operators at once (it
// waits for a killed one to exit before it starts the next), and a
// SIGKILLed leader does not release its Lease, so with election on every
// restart would first wait out the Lease (15 s), which measures
// controller-runtime's lease and not the RayJob controller's recovery.
var operatorArgs = []string{
	"--use-kubernetes-proxy", "--enable-leader-election=false",
	"--metrics-addr=0", "--health-probe-bind-address=0",
	"--log-stdout-encoder=console", "--zap-log-level=info",
	"--feature-gates=SidecarSubmitterRestart=true",
}

// operatorProcess is the operator binary run as a child process, so that it
// can be SIGKILLed and started again. Each start logs to its own file in
// the state directory (operator-<n>.log).
type operatorProcess struct {
	binary, kubeconfig, logDir string

	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed once cmd has been reaped; exitErr is then what
	// Wait said.
	exited  chan struct{}
	exitErr error
	starts  int
}

func newOperatorProcess(binary, kubeconfig, logDir string) *operatorProcess {
	return &operatorProcess{binary: binary, kubeconfig: kubeconfig, logDir: logDir}
}

// start runs a new operator process and returns its log file.
func (o *operatorProcess) start() (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cmd != nil {
		return "", errors.New("the operator is already running")
	}
	o.starts++
	logFile := filepath.Join(o.logDir, fmt.Sprintf("operator-%d.log", o.starts))
	out, err := os.Create(filepath.Join(o.logDir, fmt.Sprintf("operator-%d.out", o.starts)))
	if err != nil {
		return "", err
	}
	defer out.Close() // the child holds its own copy
	cmd := exec.Command(o.binary, append(operatorArgs, "--kubeconfig="+o.kubeconfig, "--log-file-path="+logFile)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting the operator: %w", err)
	}
	exited := make(chan struct{})
	o.cmd, o.exited = cmd, exited
	go func() {
		err := cmd.Wait()
		o.mu.Lock()
		o.exitErr = err
		o.mu.Unlock()
		close(exited)
	}()
	return logFile, nil
}

// exitedByItself returns what ended the operator when it exited without
// being killed or stopped (a crash), or nil while it runs.
func (o *operatorProcess) exitedByItself() error {
	o.mu.Lock()
	exited := o.exited
	o.mu.Unlock()
	if exited == nil {
		return errors.New("the operator is not running")
	}
	select {
	case <-exited:
		o.mu.Lock()
		defer o.mu.Unlock()
		return fmt.Errorf("the operator exited by itself (%v); its logs are in %s", o.exitErr, o.logDir)
	default:
		return nil
	}
}

// reap waits until the running operator has exited and forgets it; it
// reports false if it had not exited after timeout, else what Wait said.
func (o *operatorProcess) reap(timeout time.Duration) (bool, error) {
	select {
	case <-o.exited:
	case <-time.After(timeout):
		return false, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	err := o.exitErr
	o.cmd, o.exited = nil, nil
	return true, err
}

// kill SIGKILLs the operator and waits until it is gone, so that nothing
// it had in flight can land afterwards; it returns when it died.
func (o *operatorProcess) kill() (time.Time, error) {
	if err := o.exitedByItself(); err != nil {
		return time.Time{}, err
	}
	if err := o.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return time.Time{}, fmt.Errorf("killing the operator: %w", err)
	}
	ok, err := o.reap(time.Minute)
	if !ok {
		return time.Time{}, errors.New("the operator has not exited a minute after SIGKILL")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		return time.Time{}, fmt.Errorf("the operator did not end by the kill: %w", err)
	}
	return time.Now(), nil
}

// stop ends the operator as its Deployment would (SIGTERM), or SIGKILLs it
// when it has not stopped after 30 s.
func (o *operatorProcess) stop() error {
	if o.exited == nil {
		return nil
	}
	if err := o.exitedByItself(); err != nil {
		return err
	}
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	if ok, err := o.reap(30 * time.Second); ok {
		return err
	}
	_ = o.cmd.Process.Kill()
	if ok, _ := o.reap(time.Minute); !ok {
		return errors.New("the operator has not exited a minute after SIGKILL")
	}
	return errors.New("the operator did not stop within 30s of SIGTERM and was killed")
}

// workersStarted reads an operator log file (JSON lines, ISO 8601 times)
// for when controller (rayjob, rayservice) started its workers: the new
// operator's caches are synced and that controller reconciles again.
func workersStarted(logFile, controller string) (time.Time, bool) {
	f, err := os.Open(logFile)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for lines.Scan() {
		var entry struct{ TS, Msg, Controller string }
		if json.Unmarshal(lines.Bytes(), &entry) != nil || entry.Msg != "Starting workers" || entry.Controller != controller {
			continue
		}
		ts, err := time.Parse("2006-01-02T15:04:05.000Z0700", entry.TS)
		return ts, err == nil
	}
	return time.Time{}, false
}
