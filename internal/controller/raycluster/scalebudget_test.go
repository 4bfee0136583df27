package raycluster

import (
	"slices"
	"testing"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestScaleBudgetPerPass: a pass creates at most MaxPodWritesPerPass
// worker Pods, across groups, and asks to come back soon (not after the
// long periodic requeue) while some are left; scale-down is bounded the
// same way. The head is not counted.
func TestScaleBudgetPerPass(t *testing.T) {
	rc := makeCluster("rc").worker("small", 8).worker("large", 4).with(func(c *rayv1.RayCluster) {
		c.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To[int32](20)
	}).obj()
	h := newHarness(t, Options{MaxPodWritesPerPass: 5}, rc)

	var workers []int
	for range 3 {
		res := h.mustReconcile("rc", 1)
		workers = append(workers, len(h.pods(workerPodLabels)))
		if len(workers) < 3 && res.RequeueAfter != shortRequeue {
			t.Errorf("pass %d left Pods to create but requeues after %v, want %v", len(workers), res.RequeueAfter, shortRequeue)
		}
	}
	if want := []int{5, 10, 12}; !slices.Equal(workers, want) {
		t.Errorf("worker Pods after each pass = %v, want %v", workers, want)
	}
	if n := len(h.pods(headPodLabels)); n != 1 {
		t.Errorf("%d head Pods, want 1", n)
	}

	rc = h.cluster("rc")
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](1)
	h.update(rc)
	h.mustReconcile("rc", 1)
	if got := len(h.pods(groupPodLabels("small"))); got != 3 {
		t.Errorf("after one scale-down pass the group has %d Pods, want 8-5 = 3", got)
	}
	h.mustReconcile("rc", 1)
	if got := len(h.pods(groupPodLabels("small"))); got != 1 {
		t.Errorf("after two scale-down passes the group has %d Pods, want 1", got)
	}
}
