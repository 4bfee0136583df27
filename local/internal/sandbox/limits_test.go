package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ray-operator/ray-operator/local/internal/containerlog"
)

// forkScript forks up to n children that sleep, without retrying a failed
// fork (bash would), and says how many it made.
func forkScript(n int) string {
	return `exec python3 -c '
import os, time
made = 0
for _ in range(` + strconv.Itoa(n) + `):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork failed after", made, flush=True)
        break
    if pid == 0:
        time.sleep(300)
        os._exit(0)
    made += 1
print("forked", made, flush=True)
time.sleep(300)
'`
}

// forked reads how many children forkScript made from its output.
func forked(t *testing.T, out string) (int, bool) {
	t.Helper()
	m := regexp.MustCompile(`(forked|fork failed after) (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no fork count in %q", out)
	}
	n, _ := strconv.Atoi(m[2])
	return n, m[1] == "fork failed after"
}

// The pod's pids limit bounds its containers together: the second one may
// fork only what the first left.
func TestPodPidsLimitBoundsItsContainersTogether(t *testing.T) {
	h := newTestHost(t, 30)
	ctx := testContext(t, time.Minute)
	const limit = 24
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-pids", Namespace: "ns", Name: "forker", PidsLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	_, outA, _ := startBash(t, s, "a", forkScript(10))
	if err := outA.waitFor(ctx, "forked 10"); err != nil {
		t.Fatalf("a: %v; output %q", err, outA)
	}
	_, outB, _ := startBash(t, s, "b", forkScript(40))
	if err := outB.waitFor(ctx, "\n"); err != nil {
		t.Fatalf("b: %v", err)
	}
	made, failed := forked(t, outB.String())
	// a's python and children, b's python: limit-12 left for b's children.
	if want := limit - 12; !failed || made != want {
		t.Errorf("b forked %d children (fork failed: %v); want a failure after %d", made, failed, want)
	}
	root, err := v1Hierarchy("pids")
	if err != nil || root == "" {
		t.Fatalf("pids hierarchy: %q, %v", root, err)
	}
	data, err := os.ReadFile(filepath.Join(root, h.names.podCgroup("uid-pids"), "pids.max"))
	if err != nil || strings.TrimSpace(string(data)) != strconv.Itoa(limit) {
		t.Errorf("pod pids.max = %q, %v; want %d", data, err, limit)
	}
}

// A container without a memory limit of its own is bounded by the memory
// the host gives all its pods: past it, the kernel kills it.
func TestPodsMemoryLimitBoundsAContainerWithoutOne(t *testing.T) {
	h := newTestHost(t, 31)
	ctx := testContext(t, time.Minute)
	if err := h.LimitPodsMemory(128 << 20); err != nil {
		t.Fatal(err)
	}
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-mem", Namespace: "ns", Name: "hog"})
	if err != nil {
		t.Fatal(err)
	}
	c, out, _ := startBash(t, s, "hog", `python3 -c 'b = bytearray(300 << 20); print("allocated", flush=True)'`)
	if code := waitDone(ctx, t, c, out); code != 137 || strings.Contains(out.String(), "allocated") {
		t.Errorf("a container allocating 300 MiB under a 128 MiB bound exited %d with %q; want killed (137)", code, out)
	}
}

// /tmp is a tmpfs of the size the node gives.
func TestContainerTmpSize(t *testing.T) {
	h := newTestHost(t, 32)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-tmp", Namespace: "ns", Name: "tmp"})
	if err != nil {
		t.Fatal(err)
	}
	c, out, _ := startBash(t, s, "tmp", `python3 -c 'import os; v = os.statvfs("/tmp"); print("size", v.f_blocks * v.f_frsize)'`,
		func(spec *ContainerSpec) { spec.TmpSizeBytes = 4 << 20 })
	if code := waitDone(ctx, t, c, out); code != 0 || strings.TrimSpace(out.String()) != "size 4194304" {
		t.Errorf("exit %d, output %q; want size 4194304", code, out)
	}
}

// A rotation renames the log; ReopenLog has conmon go on in a new file.
func TestReopenLogAfterRotation(t *testing.T) {
	h := newTestHost(t, 33)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-log", Namespace: "ns", Name: "log"})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "0.log")
	c, out, _ := startBash(t, s, "log", `i=0; while true; do echo "line $i"; i=$((i+1)); sleep 0.02; done`,
		func(spec *ContainerSpec) { spec.LogPath = logPath })
	if err := out.waitFor(ctx, "line 3\n"); err != nil {
		t.Fatal(err)
	}
	rotated, err := containerlog.Rotation{MaxSize: 1, MaxFiles: 2}.Rotate(logPath, time.Now(), func() error { return c.ReopenLog(logPath) })
	if err != nil || !rotated {
		t.Fatalf("Rotate = %v, %v", rotated, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		data, _ := os.ReadFile(logPath)
		return strings.Contains(string(data), " stdout F line "), nil
	})
	if err != nil {
		t.Errorf("nothing written to the reopened log: %v", err)
	}
	matches, _ := filepath.Glob(logPath + ".*")
	if len(matches) != 1 {
		t.Fatalf("rotated files %v; want one", matches)
	}
	if data, _ := os.ReadFile(matches[0]); !strings.Contains(string(data), " stdout F line 0\n") {
		t.Errorf("the rotated file lacks the first line: %q", data)
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
}
