package raycluster_test

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestRestartDuringScaleCreatesNoDuplicates stops the operator while it is
// creating workers and starts a new one, which knows nothing of the
// previous one's pending creations: it must count what exists, not create
// the missing Pods a second time.
func TestRestartDuringScaleCreatesNoDuplicates(t *testing.T) {
	w := newWorld(t)
	w.Create(w.newCluster("restart", group("small", 1)))
	w.WaitPods("restart", groupLabels("small"), 1)

	for _, replicas := range []int32{8, 3, 10} {
		before := len(w.Pods("restart", groupLabels("small")))
		w.edit("restart", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(replicas) })
		// Stop as soon as the scale has visibly started.
		w.Eventually("the scale to start", func() (bool, error) {
			return len(w.Pods("restart", groupLabels("small"))) != before, nil
		})
		w.op.Stop()
		w.op.Start()
		w.WaitPods("restart", groupLabels("small"), int(replicas))
		w.Consistently("exactly the desired workers", 2*time.Second, func() (bool, error) {
			return len(w.Pods("restart", groupLabels("small"))) == int(replicas), nil
		})
	}
	if n := len(w.Pods("restart", headLabels())); n != 1 {
		t.Errorf("head Pods = %d, want 1", n)
	}
}
