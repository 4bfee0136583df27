// Package operator_test runs the operator binary as a user would: built with
// go build, started against a real API server with a kubeconfig file, probed
// over HTTP and stopped with SIGTERM.
package operator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

const (
	readyDeadline    = 60 * time.Second
	shutdownDeadline = 30 * time.Second
	leaseNamespace   = "default"
	leaseName        = "ray-operator-leader"
	// linkedVersion is the version the test binary is built with.
	linkedVersion = "v0.0.0-itest"
)

// operatorProcess is a started operator binary.
type operatorProcess struct {
	cmd         *exec.Cmd
	output      *bytes.Buffer
	metricsAddr string
	probeAddr   string
	started     time.Time
}

func TestOperatorBinary(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // envtest's own client logs nothing useful here
	binary := buildOperator(t)

	t.Run("rejects an invalid configuration with a clear error", func(t *testing.T) {
		out, err := exec.CommandContext(t.Context(), binary, "--reconcile-concurrency=-1", "--log-stdout-encoder=xml").CombinedOutput()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
			t.Fatalf("exit = %v, want exit code 1; output:\n%s", err, out)
		}
		for _, want := range []string{"reconcileConcurrency: must be at least 1", `logStdoutEncoder: "xml"`} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output does not contain %q:\n%s", want, out)
			}
		}
	})

	t.Run("--version prints the link-time version and exits", func(t *testing.T) {
		out, err := exec.CommandContext(t.Context(), binary, "--version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "ray-operator "+linkedVersion+" ") {
			t.Fatalf("--version = %q, %v; want a line starting %q", out, err, "ray-operator "+linkedVersion)
		}
	})

	t.Run("starts, reports ready and exits cleanly on SIGTERM", func(t *testing.T) {
		env := testenv.Start(t)
		kubeconfig := writeKubeconfig(t, env.Kubeconfig)
		pprofAddr := testenv.FreeAddr(t)
		op := startOperator(t, binary, kubeconfig, "--pprof-bind-address="+pprofAddr)

		readyAfter := waitReady(t, op)
		t.Logf("binary start to ready: %v", readyAfter)
		for _, url := range []string{"http://" + op.probeAddr + "/healthz", "http://" + op.metricsAddr + "/metrics"} {
			if code := httpStatus(t, url); code != http.StatusOK {
				t.Errorf("GET %s = %d, want 200", url, code)
			}
		}
		waitLeaseHeld(t, env.Client, true)
		if body := httpBody(t, "http://"+op.metricsAddr+"/metrics"); !strings.Contains(body, `version="`+linkedVersion+`"`) {
			t.Errorf("/metrics has no ray_operator_build_info with version %q", linkedVersion)
		}
		assertHeadStamped(t, env.Client)
		assertPprof(t, op, pprofAddr)

		stopAfter := stopOperator(t, op)
		t.Logf("SIGTERM to exit: %v", stopAfter)
		for _, addr := range []string{op.metricsAddr, op.probeAddr, pprofAddr} {
			assertNotListening(t, addr)
		}
		waitLeaseHeld(t, env.Client, false)
	})
}

// buildOperator builds cmd/ray-operator into the test's temporary directory.
func buildOperator(t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "ray-operator")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", binary,
		"-ldflags", "-X github.com/ray-operator/ray-operator/internal/buildinfo.version="+linkedVersion,
		"github.com/ray-operator/ray-operator/cmd/ray-operator")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return binary
}

func writeKubeconfig(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startOperator(t *testing.T, binary, kubeconfig string, extraArgs ...string) *operatorProcess {
	t.Helper()
	op := &operatorProcess{output: &bytes.Buffer{}, metricsAddr: testenv.FreeAddr(t), probeAddr: testenv.FreeAddr(t)}
	op.cmd = exec.Command(binary,
		"--kubeconfig="+kubeconfig,
		"--metrics-addr="+op.metricsAddr,
		"--health-probe-bind-address="+op.probeAddr,
		"--enable-leader-election=true",
		"--leader-election-namespace="+leaseNamespace,
		"--log-stdout-encoder=console",
	)
	op.cmd.Args = append(op.cmd.Args, extraArgs...)
	op.cmd.Env = append(os.Environ(), "KUBECONFIG=")
	op.cmd.Stdout, op.cmd.Stderr = op.output, op.output
	op.started = time.Now()
	if err := op.cmd.Start(); err != nil {
		t.Fatalf("starting operator: %v", err)
	}
	t.Cleanup(func() {
		if op.cmd.ProcessState == nil {
			_ = op.cmd.Process.Kill()
			_ = op.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("operator output:\n%s", op.output)
		}
	})
	return op
}

// assertPprof checks that --pprof-bind-address serves Go's profiles there,
// and only there: the metrics and probe endpoints do not.
func assertPprof(t *testing.T, op *operatorProcess, pprofAddr string) {
	t.Helper()
	if body := httpBody(t, "http://"+pprofAddr+"/debug/pprof/"); !strings.Contains(body, "heap") || !strings.Contains(body, "allocs") {
		t.Errorf("GET %s/debug/pprof/ lists no heap and allocs profiles:\n%s", pprofAddr, body)
	}
	for _, addr := range []string{op.metricsAddr, op.probeAddr} {
		if code := httpStatus(t, "http://"+addr+"/debug/pprof/"); code != http.StatusNotFound {
			t.Errorf("GET %s/debug/pprof/ = %d, want 404", addr, code)
		}
	}
}

// waitReady polls /readyz until it answers 200 and returns the time since
// the process started.
func waitReady(t *testing.T, op *operatorProcess) time.Duration {
	t.Helper()
	url := "http://" + op.probeAddr + "/readyz"
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, readyDeadline, true, func(context.Context) (bool, error) {
		if op.cmd.ProcessState != nil {
			t.Fatalf("operator exited before it was ready: %v", op.cmd.ProcessState)
		}
		return httpStatus(t, url) == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("%s did not answer 200 within %v", url, readyDeadline)
	}
	return time.Since(op.started)
}

// httpStatus returns the status code of GET url, or 0 when it cannot connect.
func httpStatus(t *testing.T, url string) int {
	t.Helper()
	code, _, err := httpGet(t, url, 2*time.Second)
	if err != nil {
		return 0
	}
	return code
}

// httpBody returns the body of GET url, which must answer 200.
func httpBody(t *testing.T, url string) string {
	t.Helper()
	code, body, err := httpGet(t, url, 5*time.Second)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET %s = %d, %v", url, code, err)
	}
	return body
}

// httpGet GETs url within timeout and returns the status code and body.
func httpGet(t *testing.T, url string, timeout time.Duration) (int, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// assertHeadStamped creates a RayCluster with no upgrade strategy and
// checks that its head Pod carries the binary's version and a spec hash, as
// every head Pod KubeRay creates does.
func assertHeadStamped(t *testing.T, c client.Client) {
	t.Helper()
	createCluster(t, c, "default", "stamped", 0)
	waitPods(t, c, "default", "stamped", 1)
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace("default"), client.MatchingLabels{rayv1.LabelCluster: "stamped"}); err != nil {
		t.Fatal(err)
	}
	a := pods.Items[0].Annotations
	if a[rayv1.LabelKubeRayVersion] != linkedVersion || a["ray.io/upgrade-strategy-recreate-hash"] == "" {
		t.Errorf("head Pod annotations = %v, want ray.io/kuberay-version %q and a recreate hash", a, linkedVersion)
	}
}

// stopOperator sends SIGTERM and asserts a zero exit within the deadline.
func stopOperator(t *testing.T, op *operatorProcess) time.Duration {
	t.Helper()
	sent := time.Now()
	if err := op.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("sending SIGTERM: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- op.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("operator exited with %v after SIGTERM, want exit code 0", err)
		}
	case <-time.After(shutdownDeadline):
		t.Fatalf("operator still running %v after SIGTERM", shutdownDeadline)
	}
	return time.Since(sent)
}

func assertNotListening(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		_ = conn.Close()
		t.Errorf("something still listens on %s after the operator exited", addr)
	}
}

// waitLeaseHeld waits until the leader election Lease is held (or released,
// which the operator does on a clean shutdown).
func waitLeaseHeld(t *testing.T, c client.Client, held bool) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var lease coordinationv1.Lease
		err := c.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: leaseName}, &lease)
		holder := ""
		if err == nil && lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		last = fmt.Sprintf("holder %q, error %v", holder, err)
		return (holder != "") == held, nil
	})
	if err != nil {
		t.Errorf("lease %s/%s: want held=%v, last seen %s", leaseNamespace, leaseName, held, last)
	}
}
