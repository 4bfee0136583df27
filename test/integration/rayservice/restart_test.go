package rayservice_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestRestartBeforeServeApplied restarts the operator while the first
// cluster is named and created but its head is not up: the new operator
// takes that cluster (no second one), applies the config once and
// promotes it.
func TestRestartBeforeServeApplied(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc"))
	w.waitCluster("svc-aaaaa")
	w.waitStatus("svc", "svc-aaaaa pending", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.RayClusterName == "svc-aaaaa"
	})

	w.restart()
	w.bringUp("svc-aaaaa")
	rs := w.waitStatus("svc", "promotion of svc-aaaaa", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-aaaaa" && st.PendingServiceStatus.RayClusterName == ""
	})
	if n := len(w.configsOn("svc-aaaaa")); n != 1 {
		t.Errorf("%d serve configs on svc-aaaaa, want 1", n)
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.NoPendingCluster) {
		t.Errorf("UpgradeInProgress = %s/%s, want False/NoPendingCluster", s, r)
	}
}

// TestRestartBeforePromotion restarts the operator during a blue/green
// upgrade, once the pending cluster has its config but its applications
// still deploy: the new operator neither prepares a third cluster nor
// applies the config again (what was applied is recorded on the cluster,
// not in memory: KubeRay #4717), and promotes the pending cluster when
// its applications run.
func TestRestartBeforePromotion(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	serveIP := w.service("svc-serve-svc").Spec.ClusterIP
	w.serve.SetInitialStatus(rayv1.ApplicationStatusDeploying)
	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")
	w.waitConfigs("svc-bbbbb", 1)
	w.waitStatus("svc", "the pending applications deploying", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.Applications["app"].Status == rayv1.ApplicationStatusDeploying
	})

	w.restart()
	w.setAppStatus("svc-bbbbb", "app", rayv1.ApplicationStatusRunning)
	rs := w.waitStatus("svc", "promotion of svc-bbbbb", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb" && st.PendingServiceStatus.RayClusterName == ""
	})
	if a, b := len(w.configsOn("svc-aaaaa")), len(w.configsOn("svc-bbbbb")); a != 1 || b != 1 {
		t.Errorf("serve configs: %d on svc-aaaaa, %d on svc-bbbbb; want 1 each", a, b)
	}
	if diff := cmp.Diff([]string{"svc-aaaaa", "svc-bbbbb"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if svc := w.service("svc-serve-svc"); svc.Spec.ClusterIP != serveIP || svc.Spec.Selector[rayv1.LabelCluster] != "svc-bbbbb" {
		t.Errorf("serve Service: ClusterIP %s (was %s), selector %v", svc.Spec.ClusterIP, serveIP, svc.Spec.Selector)
	}
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.NoPendingCluster) {
		t.Errorf("UpgradeInProgress = %s/%s, want False/NoPendingCluster", s, r)
	}
}

// TestRestartDuringDeletionDelay restarts the operator 40 s into an old
// cluster's 60 s deletion delay: the deadline is kept (KubeRay restarts the
// delay, #2374), so the old cluster is still there at 59 s and gone at
// 61 s after the switch.
func TestRestartDuringDeletionDelay(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")
	w.waitStatus("svc", "promotion of svc-bbbbb", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb"
	})
	deadline := w.deadlineOf("svc-aaaaa")

	w.clock.Step(40 * time.Second)
	w.restart()
	w.clock.SetTime(deadline.Add(-time.Second))
	// A pass of the new operator on the later clock: it counts a second
	// endpoint, and leaves the old cluster and its deadline alone.
	w.publishEndpoints("svc-serve-svc", 2)
	w.waitStatus("svc", "two endpoints", func(st *rayv1.RayServiceStatuses) bool { return st.NumServeEndpoints == 2 })
	c := w.cluster("svc-aaaaa")
	if c == nil || !c.DeletionTimestamp.IsZero() {
		t.Fatal("svc-aaaaa deleted before its deadline")
	}
	if got := c.Annotations[rayv1.AnnotationDeletionDeadline]; got != deadline.UTC().Format(time.RFC3339) {
		t.Errorf("deadline after the restart %s, was %s", got, deadline.UTC().Format(time.RFC3339))
	}

	w.clock.SetTime(deadline.Add(time.Second))
	w.waitClusterGone("svc-aaaaa")
	if diff := cmp.Diff([]string{"svc-bbbbb"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}
