// Package rayhead starts a real Ray head node on 127.0.0.1 for end-to-end
// tests, from the virtualenv that hack/ray-venv.sh installs (found through
// RAY_OPERATOR_RAY_VENV, which `make test-e2e` sets).
package rayhead

import (
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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// VenvEnv names the environment variable that points at the Ray virtualenv.
const VenvEnv = "RAY_OPERATOR_RAY_VENV"

const (
	readyTimeout = 2 * time.Minute
	// stopGrace is how long Ray gets to exit on SIGTERM before SIGKILL; a
	// test head keeps nothing worth a longer graceful shutdown.
	stopGrace = 2 * time.Second
)

// Options shape the head.
type Options struct {
	// AuthToken, when set, starts the head with token authentication
	// (RAY_AUTH_MODE=token) and this token.
	AuthToken string
	// Env is added to the head's environment; Ray's workers inherit it (for
	// example PYTHONPATH, to make a Serve application importable).
	Env []string
}

// Head is a running Ray head.
type Head struct {
	// DashboardURL is http://127.0.0.1:<port>.
	DashboardURL string
	// StartupTime is how long the head took from `ray start` to a dashboard
	// that answers the jobs API.
	StartupTime time.Duration
	// LogPath is the file that holds `ray start`'s output.
	LogPath string
}

// Start starts a Ray head that is stopped when t ends. It fails t, with the
// reason, when the virtualenv is missing or the head does not come up.
func Start(t testing.TB, opts Options) *Head {
	t.Helper()
	rayBin := rayBinary(t)
	// `ray start` gives up when its GCS does not answer within its own
	// deadline, which happens on a loaded 2-core machine; one more try
	// with fresh ports and directory is what a user would do.
	for attempt := 1; ; attempt++ {
		head, err := startOnce(t, rayBin, opts)
		if err == nil {
			return head
		}
		var exited *errExited
		if attempt == maxStartAttempts || !errors.As(err, &exited) {
			t.Fatalf("Ray head did not start: %v", err)
		}
		t.Logf("ray start failed (attempt %d), trying again: %v", attempt, err)
	}
}

// maxStartAttempts bounds the tries of Start.
const maxStartAttempts = 2

// errExited is a `ray start` that exited before the head was ready.
type errExited struct{ err error }

func (e *errExited) Error() string { return fmt.Sprintf("ray start exited: %v", e.err) }

// startOnce starts one head and waits until it is ready.
func startOnce(t testing.TB, rayBin string, opts Options) (*Head, error) {
	t.Helper()
	// Ray's unix sockets live under the temp dir, and a socket path is
	// limited to 107 bytes, so the directory is short and not t.TempDir().
	dir, err := os.MkdirTemp("", "ray")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(dir) })

	ports := testenv.FreePorts(t, 9)
	cmd := exec.Command(rayBin, startArgs(dir, ports)...)
	cmd.Env = headEnv(dir, opts)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logPath := filepath.Join(dir, "ray-start.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile

	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", rayBin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); _ = logFile.Close() }()
	t.Cleanup(func() { stopGroup(t, cmd.Process.Pid, exited) })

	head := &Head{DashboardURL: "http://127.0.0.1:" + strconv.Itoa(ports[1]), LogPath: logPath}
	agentURL := "http://127.0.0.1:" + strconv.Itoa(ports[3])
	if err := waitReady(head.DashboardURL, agentURL, opts.AuthToken, exited); err != nil {
		stopGroup(t, cmd.Process.Pid, exited) // what it left behind, before a retry
		return nil, fmt.Errorf("%w\n--- %s (tail) ---\n%s", err, logPath, tail(logPath, 4000))
	}
	head.StartupTime = time.Since(begin)
	t.Logf("Ray head up at %s in %v", head.DashboardURL, head.StartupTime.Round(time.Millisecond))
	return head, nil
}

// rayBinary finds the ray CLI in the virtualenv, failing loudly without it.
func rayBinary(t testing.TB) string {
	t.Helper()
	venv := os.Getenv(VenvEnv)
	if venv == "" {
		t.Fatalf("%s is not set: these tests need a real Ray. Run `make test-e2e`, or "+
			"`%s=$(hack/ray-venv.sh) go test ./test/e2e/...`", VenvEnv, VenvEnv)
	}
	bin := filepath.Join(venv, "bin", "ray")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s has no bin/ray (%v); rerun hack/ray-venv.sh", VenvEnv, venv, err)
	}
	return bin
}

// startArgs runs a small head in the foreground (--block), so that the
// process group this package starts holds every Ray process, with every
// port chosen here so that parallel suites do not collide.
func startArgs(dir string, p []int) []string {
	return []string{
		"start", "--head", "--block",
		"--node-ip-address=127.0.0.1",
		"--port=" + strconv.Itoa(p[0]),
		"--dashboard-host=127.0.0.1",
		"--dashboard-port=" + strconv.Itoa(p[1]),
		"--ray-client-server-port=" + strconv.Itoa(p[2]),
		"--dashboard-agent-listen-port=" + strconv.Itoa(p[3]),
		"--dashboard-agent-grpc-port=" + strconv.Itoa(p[4]),
		"--metrics-export-port=" + strconv.Itoa(p[5]),
		"--runtime-env-agent-port=" + strconv.Itoa(p[6]),
		"--node-manager-port=" + strconv.Itoa(p[7]),
		"--object-manager-port=" + strconv.Itoa(p[8]),
		"--num-cpus=2",
		"--num-gpus=0",
		"--memory=2000000000",
		"--object-store-memory=100000000",
		"--include-dashboard=true",
		"--disable-usage-stats",
		"--temp-dir=" + dir,
	}
}

// headEnv isolates the head: its own HOME (Ray enables token auth by itself
// when ~/.ray/auth_token exists) and an explicit auth mode.
func headEnv(dir string, opts Options) []string {
	env := append(os.Environ(), "HOME="+dir, "RAY_USAGE_STATS_ENABLED=0")
	env = append(env, opts.Env...)
	if opts.AuthToken == "" {
		return append(env, "RAY_AUTH_MODE=disabled")
	}
	return append(env, "RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN="+opts.AuthToken)
}

// waitReady polls until the head can take a job: GCS is healthy, the head
// node's agent (which runs submitted jobs) answers, and the jobs API answers.
// Without the agent check, the first submission can fail with "No available
// agent to submit job". It gives up when the head exits or time is up.
func waitReady(dashboardURL, agentURL, token string, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	probes := []string{dashboardURL + "/api/gcs_healthz", agentURL + "/api/local_raylet_healthz", dashboardURL + "/api/jobs/"}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		err := probeAll(ctx, probes, token)
		if err == nil {
			return nil
		}
		select {
		case exitErr := <-exited:
			return &errExited{err: exitErr}
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %v", readyTimeout, err)
		case <-tick.C:
		}
	}
}

// probeAll GETs each URL in turn and returns the first failure.
func probeAll(ctx context.Context, urls []string, token string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("x-ray-authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", u, resp.Status)
		}
	}
	return nil
}

// stopGroup ends the process group this package started: SIGTERM, then
// SIGKILL for whatever is left. It never touches other Ray processes on the
// machine, which `ray stop` would.
func stopGroup(t testing.TB, pgid int, exited <-chan error) {
	begin := time.Now()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case err := <-exited:
		t.Logf("ray start exited on SIGTERM: %v", err)
	case <-time.After(stopGrace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	// In a cleanup too, where the test's context has ended.
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, stopGrace+10*time.Second-time.Since(begin), true,
		func(context.Context) (bool, error) {
			return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH), nil
		})
	if err != nil {
		t.Errorf("Ray processes in group %d are still alive", pgid)
		return
	}
	t.Logf("Ray head stopped in %v", time.Since(begin).Round(time.Millisecond))
}

// removeAll removes the head's directory, again if a dying Ray process wrote
// into it meanwhile.
func removeAll(dir string) {
	for range 3 {
		if err := os.RemoveAll(dir); err == nil {
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tail returns the last n bytes of a file, for failure messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return strings.TrimSpace(string(data))
}
