package podworker

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ray-operator/ray-operator/local/internal/containerlog"
)

// settle returns once the worker went round its loop (and published).
func (h *harness) settle() {
	h.t.Helper()
	for range 2 {
		if err := h.w.ask(func() error { return nil }); err != nil {
			h.t.Fatal(err)
		}
	}
}

// withMemoryLimit gives the named container a memory limit.
func withMemoryLimit(pod *corev1.Pod, name, mem string) {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			pod.Spec.Containers[i].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}
		}
	}
}

// The node's pids limit reaches the pod's sandbox; /tmp is the container's
// memory limit, or the node's allocatable memory without one.
func TestNodeLimitsReachTheSandbox(t *testing.T) {
	for name, tc := range map[string]struct {
		limits   Limits
		wantPids int64
	}{
		"default":       {Limits{}, DefaultPodPidsLimit},
		"configured":    {Limits{PodPids: 100}, 100},
		"no limit (-1)": {Limits{PodPids: -1}, -1},
	} {
		t.Run(name, func(t *testing.T) {
			pod := makePod(corev1.RestartPolicyAlways, nil, "limited", "free")
			withMemoryLimit(pod, "limited", "64Mi")
			h := newHarness(t, pod, func(h *harness) {
				h.deps.Limits = tc.limits
				h.deps.Node.Allocatable = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
			})
			limited, free := h.nextStart("limited"), h.nextStart("free")
			if got := h.rt.boxes[0].spec.PidsLimit; got != tc.wantPids {
				t.Errorf("sandbox pids limit %d, want %d", got, tc.wantPids)
			}
			if limited.spec.TmpSizeBytes != 64<<20 || free.spec.TmpSizeBytes != 1<<30 {
				t.Errorf("/tmp sizes %d and %d; want 64 MiB (the limit) and 1 GiB (the node's allocatable)", limited.spec.TmpSizeBytes, free.spec.TmpSizeBytes)
			}
		})
	}
}

func TestRotateLogsKeepsTheNewestFiles(t *testing.T) {
	h := newHarness(t, makePod(corev1.RestartPolicyAlways, nil, "main"), func(h *harness) {
		h.deps.Limits.LogRotation = containerlog.Rotation{MaxSize: 1024, MaxFiles: 2}
	})
	p := h.nextStart("main")
	h.waitPod("Running", phaseIs(corev1.PodRunning))
	for range 3 {
		if err := os.WriteFile(p.spec.LogPath, make([]byte, 2048), 0o644); err != nil {
			t.Fatal(err)
		}
		h.w.RotateLogs()
		h.clk.Step(time.Second)
	}
	entries, err := os.ReadDir(filepath.Dir(p.spec.LogPath))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"0.log", "0.log.20261123-100002"}, names); diff != "" {
		t.Errorf("log files (-want +got):\n%s", diff)
	}
	if st, err := os.Stat(p.spec.LogPath); err != nil || st.Size() != 0 {
		t.Errorf("the current log after rotating: %v, %v; want an empty file", st, err)
	}
	if p.reopened != 3 {
		t.Errorf("the monitor reopened the log %d times, want 3", p.reopened)
	}
}

// TestCPUSharesFollowRequests: containers and the pod's cgroup get
// cpu.shares from the CPU requests, as a kubelet sets them, so that a node
// advertising more CPUs than the machine has shares them by request.
func TestCPUSharesFollowRequests(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "half", "two", "none")
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	pod.Spec.Containers[1].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	h := newHarness(t, pod)
	got := map[string]uint64{}
	for _, name := range []string{"half", "two", "none"} {
		got[name] = h.nextStart(name).spec.CPUShares
	}
	got["pod"] = h.rt.boxes[0].spec.CPUShares
	if diff := cmp.Diff(map[string]uint64{"half": 512, "two": 2048, "none": 2, "pod": 2560}, got); diff != "" {
		t.Errorf("cpu shares (-want +got):\n%s", diff)
	}
}
