package monitoring_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// runOperator builds cmd/ray-operator in the operator's own module (so with
// its dependency versions, not this module's) and runs it against env with
// --enable-metrics and the RayCronJob controller (a gate, off by default;
// the reconcile-errors alert names it); it returns the metrics endpoint's URL.
func runOperator(t *testing.T, env *testenv.Env) string {
	t.Helper()
	dir := t.TempDir()
	binary := filepath.Join(dir, "ray-operator")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", binary, "./cmd/ray-operator")
	build.Dir = installcheck.ModuleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	metricsAddr, probeAddr := testenv.FreeAddr(t), testenv.FreeAddr(t)
	var output bytes.Buffer
	cmd := exec.Command(binary, "--kubeconfig="+kubeconfig, "--metrics-addr="+metricsAddr,
		"--health-probe-bind-address="+probeAddr, "--enable-metrics", "--feature-gates=RayCronJob=true", "--enable-leader-election=false")
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("operator output (last 8 KiB):\n%s", tail(output.Bytes(), 8<<10))
		}
	})
	testenv.Eventually(t, "the operator to be ready", time.Minute, func() (bool, error) {
		code, _, err := get(t.Context(), "http://"+probeAddr+"/readyz")
		return code == http.StatusOK, err
	})
	return "http://" + metricsAddr + "/metrics"
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// get GETs url and returns the status code and body.
func get(ctx context.Context, url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}
