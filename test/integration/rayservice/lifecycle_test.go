package rayservice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/serveapps"
)

// TestCreationToReady follows a RayService from creation through its first
// cluster's promotion to Ready with an EndpointSlice.
func TestCreationToReady(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc"))

	rs := w.waitStatus("svc", "a pending cluster", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.RayClusterName == "svc-aaaaa"
	})
	if s, r := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionFalse || r != string(rayv1.RayServiceInitializing) {
		t.Errorf("Ready = %s/%s, want False/Initializing", s, r)
	}
	cluster := w.waitCluster("svc-aaaaa")
	if cluster.Labels[rayv1.LabelOriginatedFromCRName] != "svc" || cluster.Labels[rayv1.LabelOriginatedFromCRD] != "RayService" ||
		cluster.Annotations[rayv1.LabelHashWithoutReplicas] == "" || cluster.Annotations[rayv1.LabelNumWorkerGroups] != "1" ||
		cluster.Annotations[rayv1.LabelKubeRayVersion] == "" {
		t.Errorf("cluster metadata: labels %v annotations %v", cluster.Labels, cluster.Annotations)
	}
	if len(cluster.OwnerReferences) != 1 || cluster.OwnerReferences[0].Kind != "RayService" || cluster.OwnerReferences[0].Name != "svc" {
		t.Errorf("owner references %v", cluster.OwnerReferences)
	}

	w.bringUp("svc-aaaaa")
	w.eventually("the serve config applied to svc-aaaaa", func() (bool, error) {
		return len(w.serve.Configs(dashboardtest.URLFor("svc-aaaaa", w.ns))) == 1, nil
	})
	rs = w.waitStatus("svc", "promotion", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-aaaaa" && st.PendingServiceStatus.RayClusterName == ""
	})
	if got := rs.Status.ActiveServiceStatus.Applications["app"].Status; got != rayv1.ApplicationStatusRunning {
		t.Errorf("application status %q", got)
	}
	if got := w.cluster("svc-aaaaa").Annotations[rayv1.AnnotationAppliedServeConfig]; !serveapps.Recorded(got, rs.Spec.ServeConfigV2) {
		t.Errorf("applied config recorded on the cluster: %q", got)
	}
	head, serve := w.service("svc-head-svc"), w.service("svc-serve-svc")
	if head == nil || serve == nil {
		t.Fatalf("Services: head %v serve %v", head != nil, serve != nil)
	}
	if diff := cmp.Diff(map[string]string{rayv1.LabelCluster: "svc-aaaaa", rayv1.LabelServe: "true"}, serve.Spec.Selector); diff != "" {
		t.Errorf("serve selector (-want +got):\n%s", diff)
	}
	if head.Spec.Selector[rayv1.LabelCluster] != "svc-aaaaa" {
		t.Errorf("head selector %v", head.Spec.Selector)
	}
	if s, _ := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionFalse {
		t.Errorf("Ready before any endpoint = %s", s)
	}

	w.publishEndpoints("svc-serve-svc", 2)
	rs = w.waitStatus("svc", "Ready", func(st *rayv1.RayServiceStatuses) bool {
		s, _ := conditionOf(st, rayv1.RayServiceReady)
		return s == metav1.ConditionTrue
	})
	if rs.Status.NumServeEndpoints != 2 || rs.Status.ServiceStatus != rayv1.Running || rs.Status.ObservedGeneration != rs.Generation {
		t.Errorf("status: endpoints %d, serviceStatus %q, observedGeneration %d/%d",
			rs.Status.NumServeEndpoints, rs.Status.ServiceStatus, rs.Status.ObservedGeneration, rs.Generation)
	}
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.NoPendingCluster) {
		t.Errorf("UpgradeInProgress = %s/%s, want False/NoPendingCluster", s, r)
	}
	head = w.service("svc-head-svc")
	w.eventually("the head Pod labelled for serving", func() (bool, error) {
		return podLabel(w, "svc-aaaaa-head", rayv1.LabelServe) == "true", nil
	})
	_ = head
}

// TestRestartAfterPromotion restarts the operator with empty caches once a
// RayService is Ready: the new operator adopts the state it finds (same
// cluster, same Services, same ClusterIP) and creates nothing new.
func TestRestartAfterPromotion(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc"))
	w.waitCluster("svc-aaaaa")
	w.bringUp("svc-aaaaa")
	w.waitStatus("svc", "promotion", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-aaaaa"
	})
	w.publishEndpoints("svc-serve-svc", 1)
	before := w.waitStatus("svc", "Ready", func(st *rayv1.RayServiceStatuses) bool {
		s, _ := conditionOf(st, rayv1.RayServiceReady)
		return s == metav1.ConditionTrue
	})
	ip, gen := w.service("svc-serve-svc").Spec.ClusterIP, before.Generation

	w.restart()
	// A spec change after the restart proves the new operator is reconciling.
	w.update(before, false, func() { before.Spec.ServeConfigV2 += "  - name: second\n    import_path: b:b\n    route_prefix: /b\n" })
	w.eventually("the new config applied in place", func() (bool, error) {
		return len(w.serve.Configs(dashboardtest.URLFor("svc-aaaaa", w.ns))) == 2, nil
	})
	after := w.waitStatus("svc", "the new generation observed", func(st *rayv1.RayServiceStatuses) bool {
		return st.ObservedGeneration == gen+1
	})
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.clusterNames()); diff != "" {
		t.Errorf("clusters after restart (-want +got):\n%s", diff)
	}
	if got := w.service("svc-serve-svc").Spec.ClusterIP; got != ip {
		t.Errorf("serve ClusterIP %s, was %s", got, ip)
	}
	if after.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" || after.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("clusters in status: active %q pending %q", after.Status.ActiveServiceStatus.RayClusterName, after.Status.PendingServiceStatus.RayClusterName)
	}
}

// TestDeleteRayService deletes a RayService that has an active cluster and
// an old one waiting for its deletion deadline: both are deleted at once
// (no delay), the finalizer keeps the RayService while a cluster is still
// terminating, and goes once none is left. The Services are left to the
// garbage collector through their owner reference (there is none in this
// API server, so they are checked for that reference).
func TestDeleteRayService(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")
	w.waitStatus("svc", "promotion of svc-bbbbb", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb"
	})
	w.deadlineOf("svc-aaaaa")
	w.blockDeletion("svc-bbbbb")
	rs := w.rs("svc")
	if !controllerutil.ContainsFinalizer(rs, rayv1.RayServiceFinalizer) {
		t.Fatalf("finalizers %v", rs.Finalizers)
	}

	if err := w.c.Delete(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	w.waitClusterGone("svc-aaaaa")
	w.eventually("svc-bbbbb terminating", func() (bool, error) {
		c := w.cluster("svc-bbbbb")
		return c != nil && !c.DeletionTimestamp.IsZero(), nil
	})
	if rs = w.rs("svc"); rs == nil || !controllerutil.ContainsFinalizer(rs, rayv1.RayServiceFinalizer) {
		t.Fatal("the RayService went while a cluster was terminating")
	}

	w.releaseDeletion("svc-bbbbb")
	w.eventually("the RayService gone", func() (bool, error) { return w.rs("svc") == nil, nil })
	if got := w.allClusters(); len(got) != 0 {
		t.Errorf("clusters left: %v", got)
	}
	for _, name := range []string{"svc-head-svc", "svc-serve-svc"} {
		svc := w.service(name)
		if svc == nil {
			continue
		}
		ref := metav1.GetControllerOf(svc)
		if ref == nil || ref.Kind != "RayService" || ref.Name != "svc" || ref.UID != rs.UID {
			t.Errorf("Service %s is not the RayService's to garbage-collect: %v", name, svc.OwnerReferences)
		}
	}
	if n := len(w.events("svc", "DeletedRayCluster")); n == 0 {
		t.Error("no DeletedRayCluster event")
	}
}

// TestManagedByMultiKueue creates a RayService that MultiKueue manages
// next to one this operator manages: the first is left alone (no
// finalizer, no status, no cluster) while the second, created after it,
// is reconciled; managedBy cannot be changed.
func TestManagedByMultiKueue(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("external", func(rs *rayv1.RayService) { rs.Spec.ManagedBy = ptr.To(rayv1.MultiKueueController) }))
	w.create(rayService("mine"))
	w.waitCluster("mine-aaaaa")

	rs := w.rs("external")
	if len(rs.Finalizers) != 0 || len(rs.Status.Conditions) != 0 || rs.Status.ObservedGeneration != 0 {
		t.Errorf("the external RayService was touched: finalizers %v, status %+v", rs.Finalizers, rs.Status)
	}
	if diff := cmp.Diff([]string{"mine-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	rs.Spec.ManagedBy = ptr.To(rayv1.KubeRayController)
	if err := w.c.Update(context.Background(), rs); err == nil || !strings.Contains(err.Error(), "the managedBy field is immutable") {
		t.Errorf("changing managedBy: %v, want refused as immutable", err)
	}
}

// TestClusterManagedByMultiKueue sets rayClusterConfig.managedBy: as in
// KubeRay the cluster is built from the spec as it is, so it carries the
// value (its RayCluster controller then leaves it to MultiKueue), and the
// RayService follows it like any other once its status comes up. The
// value cannot change afterwards (the embedded spec's CEL rule).
func TestClusterManagedByMultiKueue(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc", func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.ManagedBy = ptr.To(rayv1.MultiKueueController)
	}))
	if got := w.cluster("svc-aaaaa").Spec.ManagedBy; got == nil || *got != rayv1.MultiKueueController {
		t.Errorf("cluster managedBy %v, want %s", got, rayv1.MultiKueueController)
	}
	rs := w.rs("svc")
	rs.Spec.RayClusterSpec.ManagedBy = ptr.To(rayv1.KubeRayController)
	if err := w.c.Update(context.Background(), rs); err == nil || !strings.Contains(err.Error(), "the managedBy field is immutable") {
		t.Errorf("changing rayClusterConfig.managedBy: %v, want refused as immutable", err)
	}
}
