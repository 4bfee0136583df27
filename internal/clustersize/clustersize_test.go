package clustersize_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clustersize"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestGangArithmetic(t *testing.T) {
	// head 1 CPU; "a": 3 replicas (1..5) of 2 hosts at 2 CPU + 1 GPU (limit
	// only); "b": 4 replicas (2..4), suspended; "c": 0 replicas (0..2) with
	// a GPU request that must not appear as a zero quantity.
	spec := wrappers.MakeRayClusterSpec().
		WorkerGroup("a", 3, 1, 5).WorkerGroup("b", 4, 2, 4).WorkerGroup("c", 0, 0, 2).
		Requests(rayv1.HeadGroupName, wrappers.Resources("cpu", "1", "memory", "2Gi")).
		Requests("a", wrappers.Resources("cpu", "2")).Limits("a", wrappers.Resources("cpu", "4", "nvidia.com/gpu", "1")).Hosts("a", 2).
		Requests("b", wrappers.Resources("cpu", "1")).SuspendGroup("b").
		Requests("c", wrappers.Resources("google.com/tpu", "4")).
		Obj()
	if got := clustersize.DesiredWorkerPods(spec); got != 6 {
		t.Errorf("DesiredWorkerPods = %d, want 6 (3 replicas x 2 hosts; b suspended; c none)", got)
	}
	if got := clustersize.MinWorkerPods(spec); got != 2 {
		t.Errorf("MinWorkerPods = %d, want 2 (1 replica x 2 hosts; b suspended)", got)
	}
	for name, c := range map[string]struct {
		got  corev1.ResourceList
		want corev1.ResourceList
	}{
		"desired": {clustersize.DesiredResources(spec), wrappers.Resources("cpu", "13", "memory", "2Gi", "nvidia.com/gpu", "6")},
		"min":     {clustersize.MinResources(spec), wrappers.Resources("cpu", "5", "memory", "2Gi", "nvidia.com/gpu", "2")},
	} {
		if diff := cmp.Diff(wrappers.ResourceStrings(c.want), wrappers.ResourceStrings(c.got)); diff != "" {
			t.Errorf("%s resources (-want +got):\n%s", name, diff)
		}
	}
}

func TestDesiredReplicas(t *testing.T) {
	for name, c := range map[string]struct {
		replicas, lo, hi int32
		suspend          bool
		want             int32
	}{
		"in range":      {3, 1, 5, false, 3},
		"below min":     {0, 2, 5, false, 2},
		"above max":     {9, 1, 5, false, 5},
		"min above max": {3, 6, 5, false, 5},
		"suspended":     {3, 1, 5, true, 0},
		"zero replicas": {0, 0, 5, false, 0},
	} {
		t.Run(name, func(t *testing.T) {
			w := wrappers.MakeRayClusterSpec().WorkerGroup("g", c.replicas, c.lo, c.hi)
			if c.suspend {
				w.SuspendGroup("g")
			}
			if got := clustersize.DesiredReplicas(&w.Obj().WorkerGroupSpecs[0]); got != c.want {
				t.Errorf("DesiredReplicas = %d, want %d", got, c.want)
			}
		})
	}
}

func TestSumSkipsNothingAndAddsUp(t *testing.T) {
	got := clustersize.Sum(wrappers.Resources("cpu", "500m"), wrappers.Resources("cpu", "1", "memory", "1Gi"), corev1.ResourceList{})
	if diff := cmp.Diff(map[string]string{"cpu": "1500m", "memory": "1Gi"}, wrappers.ResourceStrings(got)); diff != "" {
		t.Errorf("Sum (-want +got):\n%s", diff)
	}
	total := corev1.ResourceList{}
	clustersize.AddTimes(total, wrappers.Resources("cpu", "1"), 0)
	if len(total) != 0 {
		t.Errorf("AddTimes(x, 0) added %v, want nothing", total)
	}
}
