// Package walkthrough_test follows the README as a newcomer would: it runs
// ray-local (what `make run` runs) on a machine with no cluster configured,
// applies the K8sJobMode sample with the real kubectl, waits for SUCCEEDED
// (on the Ray its image tag names), brings up a RayCluster of an older Ray
// release (olderray_test.go), presses Ctrl-C, and then checks that nothing of the local cluster is left:
// no process, network namespace, mount, bridge, veth, cgroup or nftables
// table. It also looks at what a running ray-local exposes on the host:
// where it listens, whether the API server answers strangers, and who may
// read its keys and kubeconfig.
package walkthrough_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/kubectl"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
)

const (
	// readyTimeout bounds ray-local's start (the binaries are built).
	readyTimeout = 3 * time.Minute
	// jobTimeout bounds the sample from apply to SUCCEEDED.
	jobTimeout = 8 * time.Minute
	// exitTimeout bounds ray-local's exit after Ctrl-C: pods get their
	// grace period (Ray ignores SIGTERM as PID 1), then everything stops.
	exitTimeout = 2 * time.Minute
)

func TestReadmeWalkThroughLeavesNothingBehind(t *testing.T) {
	requireRealPods(t)
	root := installcheck.ModuleRoot(t)
	stateDir := t.TempDir()
	c := clusterOf(t, stateDir)
	run := startRayLocal(t, root, stateDir, "--metrics-addr=0", "--health-probe-bind-address=0")
	kubectl := kubectlIn(t, run.kubeconfig)

	kubectl("apply", "-f", filepath.Join(root, "config", "samples", "ray-job.k8s-job-mode.yaml"))
	began := time.Now()
	kubectl("wait", "--for=jsonpath={.status.jobDeploymentStatus}=Complete", "--timeout="+jobTimeout.String(), "rayjob/rayjob-k8s-job-mode")
	t.Logf("the sample reached Complete %v after kubectl apply", time.Since(began).Round(time.Second))
	if got := kubectl("get", "rayjob/rayjob-k8s-job-mode", "-o", "jsonpath={.status.jobStatus}"); got != "SUCCEEDED" {
		t.Fatalf("jobStatus = %q, want SUCCEEDED", got)
	}
	if logs := kubectl("logs", "job/rayjob-k8s-job-mode"); !strings.Contains(logs, "'CPU'") {
		t.Fatalf("kubectl logs of the submitter lack the entrypoint's output:\n%s", logs)
	}
	// The sample's image tag, 2.52.0, chose the Ray that ran (installed as
	// the image pull on first use), not the pinned 2.60.0.
	pulled := kubectl("get", "events", "--field-selector=reason=Pulled", "-o", "jsonpath={.items[*].message}")
	if !strings.Contains(pulled, `image "rayproject/ray:2.52.0"`) || !strings.Contains(pulled, "(local: Ray 2.52.0 virtualenv ") {
		t.Fatalf("Pulled events do not show Ray 2.52.0 for the sample's rayproject/ray:2.52.0:\n%s", pulled)
	}
	requireOlderRayHead(t, kubectl)
	// ray-local holds the host lock: the shared objects are its own.
	during := c.observeHost(t, nil, true)
	requireEveryKind(t, c, during)
	run.interrupt(t)
	after := c.observeHost(t, during.netnsInodes(), false)
	if left := after.String(); left != "" {
		t.Fatalf("after Ctrl-C, ray-local left behind:\n%s", left)
	}
}

// requireEveryKind fails t unless the running cluster shows objects of
// every kind the leftover check looks for: a check that finds none of a
// kind while the cluster runs would pass whatever is left after.
func requireEveryKind(t *testing.T, c cluster, s hostState) {
	t.Helper()
	shared := map[string]bool{}
	for _, item := range s.shared {
		shared[item] = true
	}
	for what, seen := range map[string]bool{
		"pod network namespace": len(s.netns) > 0, "veth": len(s.veths) > 0, "mount": len(s.mounts) > 0,
		"cgroup": len(s.cgroups) > 0, "process": len(s.processes) > 0, "bridge " + c.host.Bridge: shared[c.host.Bridge],
		"nftables table " + c.host.NftTable: shared["ip "+c.host.NftTable], "nftables table " + kubeProxyTable: shared["ip "+kubeProxyTable],
		"nftables table bridge " + c.host.PortGuardTable: shared["bridge "+c.host.PortGuardTable],
	} {
		if !seen {
			t.Errorf("while running, the host shows no %s of the cluster; it shows:\n%s", what, s)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// requireRealPods fails t unless ray-local can run real pods here.
func requireRealPods(t *testing.T) {
	t.Helper()
	if os.Getenv("RAY_OPERATOR_RAY_VENV") == "" {
		t.Fatal("RAY_OPERATOR_RAY_VENV is not set (make test-e2e sets it from hack/ray-venv.sh)")
	}
	if err := localcluster.CanHostPods(); err != nil {
		t.Fatalf("this machine cannot run real pods: %v", err)
	}
}

// rayLocal is a running ray-local process.
type rayLocal struct {
	cmd        *exec.Cmd
	kubeconfig string
	exited     chan error
	stderr     *lockedBuffer
}

// startRayLocal builds ray-local, starts it with the environment `make run`
// gives it (the test's, which `make test-e2e-local` sets, and the Ray
// installer), --local (a developer's own kubeconfig must not divert it) and
// args, and waits for its `export KUBECONFIG=` line.
func startRayLocal(t *testing.T, root, stateDir string, args ...string) *rayLocal {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ray-local")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ray-local")
	build.Dir = filepath.Join(root, "local") // ray-local is the local module's
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building ray-local: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"--local", "--state-dir=" + stateDir, "--feature-gates=RayCronJob=true"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG=", "RAY_OPERATOR_RAY_INSTALLER="+filepath.Join(root, "hack", "ray-venv.sh"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &rayLocal{cmd: cmd, exited: make(chan error, 1), stderr: &lockedBuffer{}}
	cmd.Stderr = r.stderr
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("ray-local's stderr:\n%s", r.stderr.tail(200))
		}
	})
	r.kubeconfig = r.awaitKubeconfig(t, stdout)
	t.Logf("ray-local ready %v after start", time.Since(began).Round(time.Millisecond))
	return r
}

// awaitKubeconfig reads ray-local's stdout until the export line.
func (r *rayLocal) awaitKubeconfig(t *testing.T, stdout io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if path, ok := strings.CutPrefix(scanner.Text(), "export KUBECONFIG="); ok {
				found <- path
			}
		}
	}()
	select {
	case path := <-found:
		return path
	case err := <-r.exited:
		t.Fatalf("ray-local exited before it was ready: %v\n%s", err, r.stderr.tail(100))
	case <-time.After(readyTimeout):
		t.Fatalf("ray-local printed no export KUBECONFIG line within %v\n%s", readyTimeout, r.stderr.tail(100))
	}
	return ""
}

// interrupt sends SIGINT, as Ctrl-C does, and waits for a clean exit.
func (r *rayLocal) interrupt(t *testing.T) {
	t.Helper()
	began := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.exited:
		if err != nil {
			t.Fatalf("ray-local exited with %v after Ctrl-C", err)
		}
		t.Logf("ray-local exited %v after Ctrl-C", time.Since(began).Round(time.Millisecond))
	case <-time.After(exitTimeout):
		t.Fatalf("ray-local still runs %v after Ctrl-C", exitTimeout)
	}
}

// kubectlIn returns a function that runs the real kubectl against
// kubeconfig and returns its output, failing t on error.
func kubectlIn(t *testing.T, kubeconfig string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), jobTimeout+time.Minute)
		defer cancel()
		out, err := kubectl.Run(ctx, kubeconfig, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
}

// lockedBuffer keeps what a process wrote to it; tail returns the last
// lines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(b.buf.String(), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
