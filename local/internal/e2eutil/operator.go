package e2eutil

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/ray-operator/ray-operator/internal/operator"
)

// BuildOperator builds the operator binary (cmd/ray-operator, as `make
// build` does) of the repository at root into dir and returns its path.
func BuildOperator(ctx context.Context, root, dir string) (string, error) {
	binary := filepath.Join(dir, "ray-operator")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", binary, "./cmd/ray-operator")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the operator: %w\n%s", err, out)
	}
	return binary, nil
}

// Operator is the operator binary run as a child process, so that it
// can be SIGKILLed and started again. Each start logs to its own file in
// the state directory (operator-<n>.log).
type Operator struct {
	binary, kubeconfig, logDir string
	args                       []string

	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed once cmd has been reaped; exitErr is then what
	// Wait said.
	exited  chan struct{}
	exitErr error
	starts  int
}

// NewOperator prepares to run binary against the cluster of kubeconfig
// with args (--kubeconfig and --log-file-path are added), logging into
// logDir.
func NewOperator(binary, kubeconfig, logDir string, args []string) *Operator {
	return &Operator{binary: binary, kubeconfig: kubeconfig, logDir: logDir, args: args}
}

// Start runs a new operator process and returns its log file.
func (o *Operator) Start() (string, error) {
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
	cmd := exec.Command(o.binary, append(slices.Clone(o.args), "--kubeconfig="+o.kubeconfig, "--log-file-path="+logFile)...)
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

// Pid is the running operator's process id, or 0.
func (o *Operator) Pid() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cmd == nil {
		return 0
	}
	return o.cmd.Process.Pid
}

// ExitedByItself returns what ended the operator when it exited without
// being killed or stopped (a crash), or nil while it runs.
func (o *Operator) ExitedByItself() error {
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
func (o *Operator) reap(timeout time.Duration) (bool, error) {
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

// Kill SIGKILLs the operator and waits until it is gone, so that nothing
// it had in flight can land afterwards; it returns when it died.
func (o *Operator) Kill() (time.Time, error) {
	if err := o.ExitedByItself(); err != nil {
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

// Stop ends the operator as its Deployment would (SIGTERM), or SIGKILLs it
// when it has not stopped after 30 s.
func (o *Operator) Stop() error {
	if o.exited == nil {
		return nil
	}
	if err := o.ExitedByItself(); err != nil {
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

// RunOperator runs the operator in-process against cfg's cluster as
// ray-local does against its own (through the API server's proxy, no
// leader election, no metrics or health endpoints), with its default
// feature gates unless extra sets them, until ctx ends; then it sends what
// the operator returned to done. Its log goes to logFile, errors also to
// stdout. A process may run several: their controllers share names, which
// controller-runtime then lets pass, and controller-runtime's global
// logger keeps the first one's log file.
func RunOperator(ctx context.Context, cfg *rest.Config, logFile string, done chan<- error, extra ...string) error {
	fs := flag.NewFlagSet("ray-operator", flag.ContinueOnError)
	flags := operator.BindFlags(fs)
	err := fs.Parse(append([]string{
		"--use-kubernetes-proxy", "--enable-leader-election=false",
		"--metrics-addr=0", "--health-probe-bind-address=0",
		"--log-file-path=" + logFile, "--log-stdout-encoder=console", "--zap-log-level=error",
	}, extra...))
	if err != nil {
		return err
	}
	settings, err := flags.Resolve(func(string) (string, bool) { return "", false })
	if err != nil {
		return err
	}
	settings.SkipControllerNameValidation = true
	go func() { done <- operator.Run(ctx, settings, flags, cfg) }()
	return nil
}
