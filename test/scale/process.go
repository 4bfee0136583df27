package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat CPU times.
const clockTicks = 100

// operatorProcess is the operator binary running against the control plane.
type operatorProcess struct {
	cmd         *exec.Cmd
	probeAddr   string
	metricsAddr string
	pprofAddr   string // empty without -pprof-dir
	log         *os.File
	done        chan struct{}
	waitErr     error
}

// buildOperator builds the operator binary into dir.
func buildOperator(ctx context.Context, root, dir string) (string, error) {
	binary := filepath.Join(dir, "ray-operator")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", binary, "./cmd/ray-operator")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ray-operator: %w\n%s", err, out)
	}
	return binary, nil
}

// startOperator builds and starts the operator binary with kubeconfig, the
// benchmark's operator flags and extra; its log goes to dir/operator.log.
func startOperator(ctx context.Context, o *options, kubeconfig, dir string, extra ...string) (*operatorProcess, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	binary := o.binary
	if binary == "" {
		var err error
		if binary, err = buildOperator(ctx, o.root, dir); err != nil {
			return nil, err
		}
	}
	ports, err := controlplane.FreePorts(3)
	if err != nil {
		return nil, err
	}
	probe, metrics, pprofAddr := loopback(ports[0]), loopback(ports[1]), ""
	log, err := os.Create(filepath.Join(dir, "operator.log"))
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--enable-leader-election=false",
		"--metrics-addr=" + metrics,
		"--health-probe-bind-address=" + probe,
	}, o.opArgs...)
	args = append(args, extra...)
	if o.pprofDir != "" {
		pprofAddr = loopback(ports[2])
		args = append(args, "--pprof-bind-address="+pprofAddr)
	}
	p := &operatorProcess{cmd: exec.Command(binary, args...), probeAddr: probe, metricsAddr: metrics, pprofAddr: pprofAddr, log: log, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.Env = append(append(os.Environ(), "KUBECONFIG="), o.opEnv...)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the operator: %w", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// waitReady waits until the operator answers /readyz.
func (p *operatorProcess) waitReady(ctx context.Context) error {
	url := "http://" + p.probeAddr + "/readyz"
	for {
		resp, err := http.Get(url) //nolint:gosec,noctx // a local probe of the process just started
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("the operator exited: %v (log %s)", p.waitErr, p.log.Name())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// cpuSeconds is the operator's user+system CPU time so far, from
// /proc/<pid>/stat (0 once it has exited).
func (p *operatorProcess) cpuSeconds() float64 { return procCPUSeconds(p.cmd.Process.Pid) }

// statCPUSeconds reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line; the command name in parentheses may hold spaces.
func statCPUSeconds(stat []byte) float64 {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0
	}
	fields := strings.Fields(string(stat[end+1:]))
	// fields[0] is the state (field 3), so field k is fields[k-3].
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / clockTicks
}

// stop stops the operator with SIGTERM and returns its peak RSS in MiB
// (getrusage's ru_maxrss of the exited child).
func (p *operatorProcess) stop() (float64, error) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.kill()
		return 0, errors.New("the operator did not stop within 30 s of SIGTERM")
	}
	_ = p.log.Close()
	usage, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, errors.New("no resource usage of the operator process")
	}
	return float64(usage.Maxrss) / 1024, nil // ru_maxrss is in KiB on Linux
}

// kill ends the operator at once, if it still runs.
func (p *operatorProcess) kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func loopback(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
