package rayservice_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
)

// TestInitializingTimeout lets a RayService whose cluster never comes up
// pass its ray.io/initializing-timeout on the operator's clock: Ready goes
// False with reason InitializingTimeout, a Warning event says so, the
// cluster names are cleared and the cluster is deleted after the deletion
// delay. The state is final: a spec fix creates no cluster.
func TestInitializingTimeout(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc", func(rs *rayv1.RayService) {
		rs.Annotations = map[string]string{rayv1.AnnotationInitializingTimeout: "30s"}
	}))
	w.waitCluster("svc-aaaaa")
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing)

	w.clock.Step(31 * time.Second)
	rs := w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout)
	ready := conditionFor(&rs.Status, rayv1.RayServiceReady)
	if !strings.Contains(ready.Message, "RayService failed to become ready within the configured timeout of 30s") {
		t.Errorf("Ready message %q", ready.Message)
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != "" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("cluster names kept: %s", clusterNamesOf(&rs.Status))
	}
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.RayServiceInitializing) {
		t.Errorf("UpgradeInProgress = %s/%s, want False/Initializing", s, r)
	}
	if ev := w.waitEvent("svc", "RayServiceInitializingTimeout"); ev.Type != corev1.EventTypeWarning || ev.Action != "Reconcile" {
		t.Errorf("event type %s action %s", ev.Type, ev.Action)
	}
	deadline := w.deadlineOf("svc-aaaaa")
	if want := w.clock.Now().Add(60 * time.Second); deadline.Before(want.Add(-time.Second)) || deadline.After(want) {
		t.Errorf("deletion deadline %v, want %v", deadline, want)
	}

	// Fix the spec and shorten the deletion delay. A leftover cluster of
	// the RayService then shows when a pass has read the new spec: it gets
	// a deadline 7 s away.
	gen := w.editSpec("svc", func(rs *rayv1.RayService) {
		withImage("rayproject/ray:2.61.0")(rs)
		rs.Spec.RayClusterDeletionDelaySeconds = ptr.To[int32](7)
	})
	// The leftover's event may reach the operator before the spec's: the
	// informers do not order one against the other.
	w.waitCached("svc", gen)
	leftover := clusterowner.Build(rs, rayv1.KindRayService, "svc-zzzzz", &rs.Spec.RayClusterSpec)
	leftover.OwnerReferences = []metav1.OwnerReference{clusterowner.ControllerRef(rs, rayv1.KindRayService)}
	w.create(leftover)
	if got, want := w.deadlineOf("svc-zzzzz"), w.clock.Now().Add(7*time.Second); got.Before(want.Add(-time.Second)) || got.After(want) {
		t.Fatalf("deadline of the leftover cluster %v, want %v", got, want)
	}
	rs = w.rs("svc")
	if !hasCondition(&rs.Status, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout) {
		t.Errorf("Ready left InitializingTimeout after a spec fix: %v", rs.Status.Conditions)
	}
	if rs.Status.PendingServiceStatus.RayClusterName != "" || rs.Status.ActiveServiceStatus.RayClusterName != "" {
		t.Errorf("a cluster was named after a spec fix: %s", clusterNamesOf(&rs.Status))
	}
	if diff := cmp.Diff([]string{"svc-aaaaa", "svc-zzzzz"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}

	// A timed-out RayService is next looked at when the first deadline is
	// due on the real clock; the fake one jumps, so a change to a cluster
	// it owns brings the pass now.
	w.clock.Step(61 * time.Second)
	w.editCluster("svc-zzzzz", func(c *rayv1.RayCluster) { c.Labels["test.ray.io/poke"] = "1" })
	w.waitClusterGone("svc-aaaaa")
	w.waitClusterGone("svc-zzzzz")
}

// TestReadyBeforeInitializingTimeout brings a RayService with an
// initializing timeout up in time: once Ready, the timeout no longer
// applies however long it runs.
func TestReadyBeforeInitializingTimeout(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc", func(rs *rayv1.RayService) {
		rs.Annotations = map[string]string{rayv1.AnnotationInitializingTimeout: "1800"}
	}))

	w.clock.Step(2 * time.Hour)
	// A pass on the later clock: the one that counts a second endpoint.
	w.publishEndpoints("svc-serve-svc", 2)
	rs := w.waitStatus("svc", "two endpoints", func(st *rayv1.RayServiceStatuses) bool { return st.NumServeEndpoints == 2 })
	if !hasCondition(&rs.Status, rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints) {
		t.Errorf("Ready after two hours: %v", rs.Status.Conditions)
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}
	if len(w.events("svc", "RayServiceInitializingTimeout")) != 0 {
		t.Error("an initializing-timeout event was recorded")
	}
}

// TestInitializingTimeoutLeftBySuspendAndResume leaves the terminal
// timed-out state the one way short of recreating the RayService: suspend
// it, then resume it; it starts Initializing again with a new cluster.
func TestInitializingTimeoutLeftBySuspendAndResume(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc", func(rs *rayv1.RayService) {
		rs.Annotations = map[string]string{rayv1.AnnotationInitializingTimeout: "30s"}
	}))
	w.waitCluster("svc-aaaaa")
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing)
	w.clock.Step(31 * time.Second)
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout)

	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = true })
	w.waitCondition("svc", rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete)
	w.waitClusterGone("svc-aaaaa")
	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = false })
	rs := w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing)
	if ready := conditionFor(&rs.Status, rayv1.RayServiceReady); !ready.LastTransitionTime.After(w.clock.Now().Add(-2 * time.Second)) {
		t.Errorf("Ready transition time %v not fresh (now %v): the timeout would fire at once", ready.LastTransitionTime, w.clock.Now())
	}
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")
	w.waitStatus("svc", "svc-bbbbb active", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb"
	})
}
