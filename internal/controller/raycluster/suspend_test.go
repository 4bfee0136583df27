package raycluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
)

// suspendConditions returns the statuses of Suspending and Suspended.
func suspendConditions(rc *rayv1.RayCluster) [2]string {
	var out [2]string
	for i, t := range []rayv1.RayClusterConditionType{rayv1.RayClusterSuspending, rayv1.RayClusterSuspended} {
		if c := meta.FindStatusCondition(rc.Status.Conditions, string(t)); c != nil {
			out[i] = string(c.Status)
		}
	}
	return out
}

func TestSuspendAndResume(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").worker("small", 2).obj())
	h.mustReconcile("rc", 1)
	h.setPodStatus(podSelector(h.cluster("rc"), nil), runningReady)
	h.mustReconcile("rc", 1)

	rc := h.cluster("rc")
	rc.Spec.Suspend = ptr.To(true)
	h.update(rc)

	// Each pass advances one step; a status change requeues quickly. The
	// fake client removes deleted Pods at once, so the deletion and the
	// Suspended condition come in one pass (the envtest suite shows them
	// apart).
	steps := []struct {
		wantConditions [2]string
		wantPods       int
		wantState      rayv1.ClusterState
	}{
		{[2]string{"True", "False"}, 3, rayv1.Ready},     // marked Suspending, nothing deleted yet
		{[2]string{"False", "True"}, 0, rayv1.Suspended}, // all Pods deleted in one call, none left: Suspended
	}
	for i, step := range steps {
		res := h.mustReconcile("rc", 1)
		rc = h.cluster("rc")
		got := suspendConditions(rc)
		if diff := cmp.Diff(step.wantConditions, got); diff != "" {
			t.Errorf("pass %d: [Suspending, Suspended] (-want +got):\n%s", i, diff)
		}
		if n := len(h.pods(nil)); n != step.wantPods {
			t.Errorf("pass %d: Pods = %d, want %d", i, n, step.wantPods)
		}
		if rc.Status.State != step.wantState {
			t.Errorf("pass %d: state = %q, want %q", i, rc.Status.State, step.wantState)
		}
		if res.RequeueAfter != shortRequeue {
			t.Errorf("pass %d: requeue after %v, want %v after a status change", i, res.RequeueAfter, shortRequeue)
		}
	}
	if meta.IsStatusConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterProvisioned)) {
		t.Error("a suspended cluster must not stay Provisioned")
	}

	// Resume: Suspended is cleared first, then the Pods come back.
	rc.Spec.Suspend = ptr.To(false)
	h.update(rc)
	h.mustReconcile("rc", 1)
	if got := suspendConditions(h.cluster("rc")); got != [2]string{"False", "False"} {
		t.Errorf("after resume: [Suspending, Suspended] = %v", got)
	}
	h.mustReconcile("rc", 1)
	if n := len(h.pods(nil)); n != 3 {
		t.Errorf("Pods after resume = %d, want 3", n)
	}
}

func TestSuspendWithoutStatusConditions(t *testing.T) {
	gate := features.NewGate()
	if err := gate.SetFromMap(map[string]bool{string(features.RayClusterStatusConditions): false}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{Features: gate}, makeCluster("rc").worker("small", 1).obj())
	h.mustReconcile("rc", 1)
	rc := h.cluster("rc")
	rc.Spec.Suspend = ptr.To(true)
	h.update(rc)
	h.mustReconcile("rc", 1)
	if n := len(h.pods(nil)); n != 0 {
		t.Errorf("Pods = %d, want 0: without the gate spec.suspend alone deletes them", n)
	}
	rc = h.cluster("rc")
	if len(rc.Status.Conditions) != 0 {
		t.Errorf("conditions = %v, want none without the gate", rc.Status.Conditions)
	}
	if rc.Status.State != rayv1.Suspended {
		t.Errorf("state = %q, want suspended", rc.Status.State)
	}
}
