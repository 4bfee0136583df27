package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// nosyPod runs as root in a Ray image and sleeps for a number no other
// process on the machine sleeps for, so the test finds it on the host.
const nosyPod = `
apiVersion: v1
kind: Pod
metadata:
  name: nosy
spec:
  terminationGracePeriodSeconds: 0
  securityContext: {runAsUser: 0, runAsGroup: 0}
  containers:
    - name: main
      image: rayproject/ray:2.52.0
      command: ["sleep", "%d"]
      resources: {requests: {cpu: 10m, memory: 32Mi}}
`

// nosyScript tries, as root in the container, to see the host's private
// places ($1...) and to write to the host's / ($escape); it prints what it
// reached.
const nosyScript = `
escape=$1; shift
echo "id=$(id -u)"
echo "root=$(ls -A /root 2>&1 | tr '\n' ' ')"
echo "home=$(ls -A /home 2>&1 | tr '\n' ' ')"
for p in /etc/shadow /etc/ssh "$@"; do
	if [ -e "$p" ]; then echo "reached=$p"; fi
	if cat "$p" >/dev/null 2>&1; then echo "read=$p"; fi
done
touch "$escape" 2>/dev/null
echo "ray=$(ray --version)"
`

// TestPodSeesNothingPrivate: a pod running as root in its container sees
// none of the host's private files (the home directories, the repository,
// the cluster's keys and tokens, /etc/shadow), cannot write outside its own
// layer, and its root is an unprivileged user on the host.
func TestPodSeesNothingPrivate(t *testing.T) {
	ns := shared.namespace(t)
	marker := 100000 + os.Getpid()%100000
	shared.applyManifest(t, ns, "nosyPod", fmt.Appendf(nil, nosyPod, marker))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	shared.waitPodRunning(ctx, t, ns, "nosy")

	escape := "/ray-local-e2e-escape-" + strconv.Itoa(marker)
	t.Cleanup(func() { _ = os.Remove(escape) })
	private := []string{shared.Root, filepath.Join(shared.Root, "go.mod"), shared.StateDir,
		filepath.Join(shared.StateDir, "pki", "tokens.csv"), filepath.Join(shared.StateDir, "kubeconfig")}
	// The home directory's own path exists in images (/root); what is in it
	// on the host must not.
	if home, err := os.UserHomeDir(); err == nil {
		entries, _ := os.ReadDir(home)
		for _, e := range entries[:min(len(entries), 20)] {
			private = append(private, filepath.Join(home, e.Name()))
		}
	}
	args := append([]string{"exec", "-n", ns, "nosy", "--", "bash", "-c", nosyScript, "nosy", escape}, private...)
	out, err := shared.kubectl(ctx, args...)
	if err != nil {
		t.Fatalf("kubectl exec: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		key, value, _ := strings.Cut(line, "=")
		switch key {
		case "reached", "read":
			t.Errorf("the pod %s %s", key, value)
		case "id":
			if value != "0" {
				t.Errorf("id -u in the container = %s, want 0 (root)", value)
			}
		case "root", "home":
			if want := map[string]string{"root": "", "home": "ray "}[key]; value != want {
				t.Errorf("/%s in the container lists %q, want %q", key, value, want)
			}
		}
	}
	if !strings.Contains(out, "ray=ray, version") {
		t.Errorf("ray --version did not run in the container:\n%s", out)
	}
	if _, err := os.Stat(escape); err == nil {
		t.Errorf("the pod created %s on the host", escape)
	}
	uid := hostUIDOf(t, "sleep\x00"+strconv.Itoa(marker)+"\x00")
	if uid < 65536 {
		t.Errorf("the pod's root runs as host uid %d, want an unprivileged one outside the host's users", uid)
	}
	t.Logf("root in the container is host uid %d", uid)
}

// waitPodRunning waits until the Pod is Running.
func (s *suite) waitPodRunning(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	pod := &corev1.Pod{}
	err := poll(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pod); err != nil {
			return false, err
		}
		return pod.Status.Phase == corev1.PodRunning, fmt.Errorf("phase %s", pod.Status.Phase)
	})
	if err != nil {
		t.Fatalf("pod %s is not running: %v", name, err)
	}
}

// hostUIDOf is the host uid of the one process whose command line is
// cmdline (NUL-separated, as /proc shows it).
func hostUIDOf(t *testing.T, cmdline string) int {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if data, err := os.ReadFile(p); err != nil || string(data) != cmdline {
			continue
		}
		info, err := os.Stat(filepath.Dir(p))
		if err != nil {
			t.Fatal(err)
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			t.Fatalf("no owner of %s", filepath.Dir(p))
		}
		return int(st.Uid)
	}
	t.Fatalf("no process runs %q", cmdline)
	return -1
}
