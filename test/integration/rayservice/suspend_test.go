package rayservice_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestSuspendResume suspends a serving RayService, then resumes it:
// Suspending (SuspendRequested) is written first, then everything it owns
// is deleted and it ends Suspended (SuspendComplete) with Ready False; on
// resume it starts over from Initializing with a fresh cluster.
func TestSuspendResume(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	history := w.statusHistory("svc")

	gen := w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = true })
	rs := w.waitCondition("svc", rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete)
	// The watch behind history may lag the read waitCondition made.
	seen := w.historyUntil(history, func(st *rayv1.RayServiceStatuses) bool {
		return hasCondition(st, rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete)
	})
	requested := firstIndex(seen, func(st *rayv1.RayServiceStatuses) bool {
		return hasCondition(st, rayv1.RayServiceSuspending, metav1.ConditionTrue, rayv1.SuspendRequested)
	})
	suspended := firstIndex(seen, func(st *rayv1.RayServiceStatuses) bool {
		return hasCondition(st, rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete)
	})
	if requested < 0 || suspended < requested {
		t.Errorf("Suspending/SuspendRequested written at %d, Suspended at %d; want the first before the second", requested, suspended)
	}
	if requested >= 0 {
		st := &seen[requested]
		if s, r := conditionOf(st, rayv1.RayServiceReady); s != metav1.ConditionFalse || r != string(rayv1.SuspendInProgress) {
			t.Errorf("Ready when suspension was requested: %s/%s, want False/SuspendInProgress", s, r)
		}
		if st.ActiveServiceStatus.RayClusterName != "" || st.NumServeEndpoints != 0 || st.ServiceStatus != rayv1.NotRunning {
			t.Errorf("status when suspension was requested still names the service: %s, endpoints %d, %q",
				clusterNamesOf(st), st.NumServeEndpoints, st.ServiceStatus)
		}
	}
	for _, c := range []struct {
		t      rayv1.RayServiceConditionType
		status metav1.ConditionStatus
		reason rayv1.RayServiceConditionReason
	}{
		{rayv1.RayServiceSuspending, metav1.ConditionFalse, rayv1.SuspendComplete},
		{rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.SuspendComplete},
		{rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.SuspendComplete},
	} {
		if !hasCondition(&rs.Status, c.t, c.status, c.reason) {
			s, r := conditionOf(&rs.Status, c.t)
			t.Errorf("%s = %s/%s, want %s/%s", c.t, s, r, c.status, c.reason)
		}
	}
	if rs.Status.ObservedGeneration != gen {
		t.Errorf("observedGeneration %d, want %d", rs.Status.ObservedGeneration, gen)
	}
	if got := w.allClusters(); len(got) != 0 {
		t.Errorf("clusters left: %v", got)
	}
	for _, svc := range []string{"svc-head-svc", "svc-serve-svc"} {
		if w.service(svc) != nil {
			t.Errorf("Service %s left", svc)
		}
	}
	w.waitEvent("svc", "DeletedRayCluster")
	w.waitEvent("svc", "DeletedService")
	w.syncEndpoints("svc-serve-svc")

	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = false })
	rs = w.waitCondition("svc", rayv1.RayServiceSuspended, metav1.ConditionFalse, rayv1.RayServiceResumed)
	if s, r := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionFalse || r != string(rayv1.RayServiceInitializing) {
		t.Errorf("Ready after resuming = %s/%s, want False/Initializing", s, r)
	}
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")
	w.waitStatus("svc", "svc-bbbbb active", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb"
	})
	if svc := w.service("svc-serve-svc"); svc == nil || svc.Spec.Selector[rayv1.LabelCluster] != "svc-bbbbb" {
		t.Errorf("serve Service after resuming: %v", svc)
	}
	if diff := cmp.Diff([]string{"svc-bbbbb"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

// TestSuspendIsAtomic holds a suspension half-way (the cluster cannot go
// yet), then turns suspend off and changes the cluster spec: the
// suspension still completes, no cluster is created meanwhile, and only
// then does the RayService resume, with a cluster of the new spec.
func TestSuspendIsAtomic(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.blockDeletion("svc-aaaaa")

	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = true })
	w.waitCondition("svc", rayv1.RayServiceSuspending, metav1.ConditionTrue, rayv1.SuspendInProgress)
	w.eventually("svc-aaaaa terminating", func() (bool, error) {
		c := w.cluster("svc-aaaaa")
		return c != nil && !c.DeletionTimestamp.IsZero(), nil
	})

	gen := w.editSpec("svc", func(rs *rayv1.RayService) {
		rs.Spec.Suspend = false
		withImage("rayproject/ray:2.61.0")(rs)
	})
	rs := w.waitObserved("svc")
	if rs.Status.ObservedGeneration != gen {
		t.Fatalf("observedGeneration %d, want %d", rs.Status.ObservedGeneration, gen)
	}
	if !hasCondition(&rs.Status, rayv1.RayServiceSuspending, metav1.ConditionTrue, rayv1.SuspendInProgress) {
		s, r := conditionOf(&rs.Status, rayv1.RayServiceSuspending)
		t.Errorf("Suspending = %s/%s after suspend was turned off, want True/SuspendInProgress", s, r)
	}
	if s, _ := conditionOf(&rs.Status, rayv1.RayServiceSuspended); s == metav1.ConditionTrue {
		t.Error("Suspended while a cluster is still terminating")
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != "" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("clusters named while suspending: %s", clusterNamesOf(&rs.Status))
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters while suspending (-want +got):\n%s", diff)
	}

	history := w.statusHistory("svc")
	w.releaseDeletion("svc-aaaaa")
	rs = w.waitCondition("svc", rayv1.RayServiceSuspended, metav1.ConditionFalse, rayv1.RayServiceResumed)
	seen := w.historyUntil(history, func(st *rayv1.RayServiceStatuses) bool {
		return hasCondition(st, rayv1.RayServiceSuspended, metav1.ConditionFalse, rayv1.RayServiceResumed)
	})
	if firstIndex(seen, func(st *rayv1.RayServiceStatuses) bool {
		return hasCondition(st, rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete)
	}) < 0 {
		t.Error("resumed without having been Suspended")
	}
	if s, r := conditionOf(&rs.Status, rayv1.RayServiceSuspending); s != metav1.ConditionFalse || r != string(rayv1.SuspendComplete) {
		t.Errorf("Suspending = %s/%s, want False/SuspendComplete", s, r)
	}
	c := w.waitCluster("svc-bbbbb")
	if got := headImage(c); got != "rayproject/ray:2.61.0" {
		t.Errorf("image of the cluster after resuming %q", got)
	}
}

// TestCreatedSuspended creates a RayService with suspend set: it goes to
// Suspended without ever creating a cluster or a Service.
func TestCreatedSuspended(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = true }))
	rs := w.waitCondition("svc", rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete)
	if rs.Status.ObservedGeneration != rs.Generation {
		t.Errorf("observedGeneration %d, want %d", rs.Status.ObservedGeneration, rs.Generation)
	}
	if got := w.allClusters(); len(got) != 0 {
		t.Errorf("clusters: %v", got)
	}
	if w.service("svc-head-svc") != nil || w.service("svc-serve-svc") != nil {
		t.Error("a Service was created")
	}
	if len(w.events("svc", "CreatedRayCluster")) != 0 {
		t.Error("a CreatedRayCluster event was recorded")
	}
}

// TestSuspendDuringUpgrade suspends a RayService while a pending cluster is
// up: both clusters and the Services go, and resuming starts from one
// fresh cluster of the current spec.
func TestSuspendDuringUpgrade(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.serve.SetInitialStatus(rayv1.ApplicationStatusDeploying)
	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")
	w.waitConfigs("svc-bbbbb", 1)

	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = true })
	rs := w.waitCondition("svc", rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete)
	if rs.Status.ActiveServiceStatus.RayClusterName != "" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}
	if !hasCondition(&rs.Status, rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.SuspendComplete) {
		t.Errorf("UpgradeInProgress: %v", rs.Status.Conditions)
	}
	if got := w.allClusters(); len(got) != 0 {
		t.Errorf("clusters left: %v", got)
	}
	if w.service("svc-head-svc") != nil || w.service("svc-serve-svc") != nil {
		t.Error("a Service was left")
	}

	w.syncEndpoints("svc-serve-svc")
	w.serve.SetInitialStatus(rayv1.ApplicationStatusRunning)
	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = false })
	if got := headImage(w.waitCluster("svc-ccccc")); got != "rayproject/ray:2.61.0" {
		t.Errorf("image after resuming %q", got)
	}
	w.bringUp("svc-ccccc")
	rs = w.waitStatus("svc", "svc-ccccc active", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-ccccc" && st.PendingServiceStatus.RayClusterName == ""
	})
	if !hasCondition(&rs.Status, rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster) {
		t.Errorf("UpgradeInProgress: %v", rs.Status.Conditions)
	}
	if diff := cmp.Diff([]string{"svc-ccccc"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}
