package node_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/rayvenv"
)

// olderRay is the Ray release testRayRelease installs: not the pinned one,
// so its pods run only once the node installed it (hack/ray-venv.sh, as
// the node does for `make run`; cached outside the clone after the first
// run of the suite on a machine).
const olderRay = "2.41.0"

// pullTimeout bounds a first install of olderRay (about 15-60 s).
const pullTimeout = 5 * time.Minute

// testRayImages is what the suite's Ray images run: the pinned release
// from an empty directory (the suite's other pods run only the system's
// shell) and other releases installed by the project's script.
func testRayImages(t *testing.T) podinputs.RayImages {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	python, err := exec.Command("/usr/bin/python3", "-c", `import sys; print("%d.%d" % sys.version_info[:2])`).Output()
	if err != nil {
		t.Fatalf("the system's python3: %v", err)
	}
	return podinputs.RayImages{
		Pinned:    rayvenv.Venv{Dir: t.TempDir(), Version: "2.60.0", Python: strings.TrimSpace(string(python))},
		Installer: rayvenv.Installer{Script: filepath.Join(root, "hack", "ray-venv.sh")},
	}
}

// testRayRelease: a pod of rayproject/ray:<olderRay> imports that Ray, after
// Pulling and Pulled events; a pod of a release PyPI does not have waits
// with ErrImagePull (then ImagePullBackOff) and pip's reason.
func testRayRelease(t *testing.T, c *cluster) {
	began := time.Now()
	pod := sleepPod("ray-older", "")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Containers[0].Image = "rayproject/ray:" + olderRay + "-py311-cpu"
	pod.Spec.Containers[0].Command = []string{"python", "-c", "import ray; print(ray.__version__)"}
	createAndWait(t, c, pod, "created", func(*corev1.Pod) bool { return true })
	missing := sleepPod("ray-missing", "exit 0")
	missing.Spec.Containers[0].Image = "rayproject/ray:2.999.0"
	createAndWait(t, c, missing, "created", func(*corev1.Pod) bool { return true })

	waitPodFor(t, c, "ray-older", "Succeeded", pullTimeout, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	t.Logf("a pod of Ray %s succeeded %s after its creation", olderRay, time.Since(began).Round(time.Second))
	if logs := kubeletLogs(t, c, "ray-older", "main"); strings.TrimSpace(logs) != olderRay {
		t.Errorf("logs = %q, want %s", logs, olderRay)
	}
	pulling := podEvent(t, c, "ray-older", "Pulling")
	t.Logf("event Pulled: %s", podEvent(t, c, "ray-older", "Pulled"))
	pulled := podEvent(t, c, "ray-older", "Pulled")
	if pulling != `Pulling image "rayproject/ray:`+olderRay+`-py311-cpu"` || !strings.HasPrefix(pulled, `Successfully pulled image "rayproject/ray:`+olderRay+`-py311-cpu" in `) {
		t.Errorf("events Pulling %q, Pulled %q", pulling, pulled)
	}

	got := waitPodFor(t, c, "ray-missing", "ErrImagePull", pullTimeout, func(p *corev1.Pod) bool {
		st := p.Status.ContainerStatuses
		return len(st) == 1 && st[0].State.Waiting != nil && (st[0].State.Waiting.Reason == "ErrImagePull" || st[0].State.Waiting.Reason == "ImagePullBackOff")
	})
	if w := got.Status.ContainerStatuses[0].State.Waiting; !strings.Contains(w.Message, "No matching distribution found for ray[default,serve]==2.999.0") {
		t.Errorf("waiting %+v, want pip's reason", w)
	}
	deleteAndWait(t, c, "ray-older", "ray-missing")
}

// waitPodFor waits up to d until the pod satisfies ok.
func waitPodFor(t *testing.T, c *cluster, name, what string, d time.Duration, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, d, true, func(ctx context.Context) (bool, error) {
		p, err := c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = p
		return ok(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s never reached %s: %v; last status %+v", name, what, err, got)
	}
	return got
}

// podEvent is the message of the pod's first event with reason.
func podEvent(t *testing.T, c *cluster, pod, reason string) string {
	t.Helper()
	evs, err := c.cs.CoreV1().Events(namespace).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod + ",reason=" + reason})
	if err != nil || len(evs.Items) == 0 {
		t.Errorf("no %s event of pod %s (%v)", reason, pod, err)
		return ""
	}
	return evs.Items[0].Message
}
