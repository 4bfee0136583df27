package rayservice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// interval is the incremental tests' intervalSeconds.
const interval = 30 * time.Second

// incremental makes a RayService upgrade with NewClusterWithIncrementalUpgrade:
// traffic moves 25 % per interval, capacity 50 % per step.
func incremental(rs *rayv1.RayService) {
	rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
	rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{
		Type: ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade),
		ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
			MaxSurgePercent: ptr.To[int32](50), StepSizePercent: ptr.To[int32](25),
			IntervalSeconds: ptr.To(int32(interval / time.Second)), GatewayClassName: "test-gateway-class",
		},
	}
}

// get reads an object of the test namespace into obj; false when missing.
func (w *world) get(name string, obj client.Object) bool {
	w.t.Helper()
	err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, obj)
	if client.IgnoreNotFound(err) != nil {
		w.t.Fatal(err)
	}
	return err == nil
}

// programGateway plays a gateway controller: the Gateway is accepted and
// programmed, and the HTTPRoute accepted with its references resolved.
func (w *world) programGateway(rsName string) {
	w.t.Helper()
	cond := func(t string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t, LastTransitionTime: metav1.Now()}
	}
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: rsName + "-gateway", Namespace: w.ns}}
	w.update(gw, true, func() {
		meta.SetStatusCondition(&gw.Status.Conditions, cond("Accepted"))
		meta.SetStatusCondition(&gw.Status.Conditions, cond("Programmed"))
	})
	route := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: rsName + "-httproute", Namespace: w.ns}}
	w.update(route, true, func() {
		route.Status.Parents = []gwv1.RouteParentStatus{{
			ParentRef:      gwv1.ParentReference{Name: gwv1.ObjectName(rsName + "-gateway"), Namespace: ptr.To(gwv1.Namespace(w.ns))},
			ControllerName: "example.com/test-gateway-controller",
			Conditions:     []metav1.Condition{cond("Accepted"), cond("ResolvedRefs")},
		}}
	})
}

// weights are the HTTPRoute's backends and weights, in order.
func (w *world) weights(rsName string) []string {
	w.t.Helper()
	route := &gwv1.HTTPRoute{}
	if !w.get(rsName+"-httproute", route) {
		return nil
	}
	var out []string
	for _, rule := range route.Spec.Rules {
		for _, b := range rule.BackendRefs {
			out = append(out, fmt.Sprintf("%s=%d", b.Name, ptr.Deref(b.Weight, 1)))
		}
	}
	return out
}

// capacities are the target_capacity values PUT to a cluster's Serve, in
// order (-1 for a config without one), a value repeated at once counted
// once: a pass whose status write lost a race with a stale cache repeats
// its (idempotent) PUT.
func (w *world) capacities(cluster string) []int {
	var out []int
	for _, body := range w.serve.Configs(dashboardtest.URLFor(cluster, w.ns)) {
		var c struct {
			TargetCapacity *float64 `json:"target_capacity"`
		}
		if err := json.Unmarshal(body, &c); err != nil {
			w.t.Fatal(err)
		}
		v := -1
		if c.TargetCapacity != nil {
			v = int(*c.TargetCapacity)
		}
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// readyIncremental brings a RayService with an incremental strategy to
// Ready on svc-aaaaa, with the gateway programmed.
func readyIncremental(w *world) {
	w.t.Helper()
	w.create(rayService("svc", incremental))
	w.waitCluster("svc-aaaaa")
	w.bringUp("svc-aaaaa")
	w.eventually("the HTTPRoute", func() (bool, error) {
		return cmp.Equal(w.weights("svc"), []string{"svc-aaaaa-serve-svc=100"}), fmt.Errorf("weights %v", w.weights("svc"))
	})
	w.programGateway("svc")
	w.publishEndpoints("svc-aaaaa-serve-svc", 1)
	w.waitStatus("svc", "Ready", func(st *rayv1.RayServiceStatuses) bool {
		s, _ := conditionOf(st, rayv1.RayServiceReady)
		return s == metav1.ConditionTrue
	})
}

// startUpgrade changes the cluster spec and brings up the pending cluster
// svc-bbbbb.
func startUpgrade(w *world) {
	w.t.Helper()
	rs := w.rs("svc")
	w.update(rs, false, func() {
		rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.61.0"
	})
	pending := w.waitCluster("svc-bbbbb")
	// The RayService asks for replicas: 1; the new cluster leaves replicas
	// to the autoscaler, which starts from minReplicas (the CRD defaults the
	// unset field to 0).
	for _, g := range pending.Spec.WorkerGroupSpecs {
		if ptr.Deref(g.Replicas, 0) > ptr.Deref(g.MinReplicas, 0) {
			w.t.Errorf("worker group %s of the pending cluster starts at %d replicas, want the autoscaler's minReplicas", g.GroupName, *g.Replicas)
		}
	}
	w.bringUp("svc-bbbbb")
}

// stepUntil advances the clock by one interval at a time until cond holds.
func (w *world) stepUntil(what string, cond func(*rayv1.RayServiceStatuses) bool) *rayv1.RayService {
	w.t.Helper()
	for range 12 {
		rs := w.rs("svc")
		if cond(&rs.Status) {
			return rs
		}
		before := rs.Status.DeepCopy()
		w.clock.Step(interval)
		// One interval allows one traffic step; wait for the status to move.
		w.eventually(what+": the next step", func() (bool, error) {
			now := w.rs("svc").Status
			return cond(&now) || !cmp.Equal(trafficOf(before), trafficOf(&now)), nil
		})
	}
	w.t.Fatalf("%s: not reached after 12 intervals", what)
	return nil
}

// trafficOf summarises the traffic and capacity of both clusters.
func trafficOf(st *rayv1.RayServiceStatuses) string {
	f := func(s rayv1.RayServiceStatus) string {
		d := func(p *int32) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprint(*p)
		}
		return fmt.Sprintf("%s tc=%s tr=%s", s.RayClusterName, d(s.TargetCapacity), d(s.TrafficRoutedPercent))
	}
	return f(st.ActiveServiceStatus) + " | " + f(st.PendingServiceStatus)
}

// TestIncrementalUpgrade follows an incremental upgrade from a cluster spec
// change to the promotion of the new cluster, against the Gateway API CRDs
// with the test playing the gateway controller.
func TestIncrementalUpgrade(t *testing.T) {
	w := newWorld(t)
	readyIncremental(w)
	gw := &gwv1.Gateway{}
	if !w.get("svc-gateway", gw) || gw.Spec.GatewayClassName != "test-gateway-class" ||
		len(gw.Spec.Listeners) != 1 || gw.Spec.Listeners[0].Name != "http" || gw.Spec.Listeners[0].Port != 80 {
		t.Errorf("Gateway %+v", gw.Spec)
	}
	perCluster := w.service("svc-aaaaa-serve-svc")
	if perCluster == nil || len(perCluster.OwnerReferences) != 1 || perCluster.OwnerReferences[0].Name != "svc-aaaaa" {
		t.Fatalf("per-cluster serve Service %+v", perCluster)
	}
	if w.service("svc-serve-svc") != nil {
		t.Error("an incremental RayService has a RayService-wide serve Service")
	}

	startUpgrade(w)
	w.waitStatus("svc", "the pending cluster's capacity raised", func(st *rayv1.RayServiceStatuses) bool {
		return ptr.Deref(st.PendingServiceStatus.TargetCapacity, 0) == 50
	})
	var seen []string
	rs := w.stepUntil("promotion", func(st *rayv1.RayServiceStatuses) bool {
		if len(seen) == 0 || seen[len(seen)-1] != trafficOf(st) {
			seen = append(seen, trafficOf(st))
		}
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb" && st.PendingServiceStatus.RayClusterName == ""
	})
	t.Logf("traffic and capacity over the upgrade:\n%v", seen)

	if got := rs.Status.ActiveServiceStatus; ptr.Deref(got.TargetCapacity, -1) != 100 || ptr.Deref(got.TrafficRoutedPercent, -1) != 100 {
		t.Errorf("promoted cluster: %s", trafficOf(&rs.Status))
	}
	if diff := cmp.Diff([]int{0, 50, 100}, w.capacities("svc-bbbbb")); diff != "" {
		t.Errorf("target_capacity PUT to the new cluster (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{100, 50, 0}, w.capacities("svc-aaaaa")); diff != "" {
		t.Errorf("target_capacity PUT to the old cluster (-want +got):\n%s", diff)
	}
	w.eventually("the route on the new cluster alone", func() (bool, error) {
		return cmp.Equal(w.weights("svc"), []string{"svc-bbbbb-serve-svc=100"}), fmt.Errorf("weights %v", w.weights("svc"))
	})
	w.eventually("the old cluster's deletion deadline", func() (bool, error) {
		c := w.cluster("svc-aaaaa")
		return c != nil && c.Annotations[rayv1.AnnotationDeletionDeadline] != "", nil
	})
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.NoPendingCluster) {
		t.Errorf("UpgradeInProgress %s/%s", s, r)
	}
	assertMonotonic(t, seen)
}

// assertMonotonic checks that the pending cluster's traffic never went
// down during an upgrade.
func assertMonotonic(t *testing.T, seen []string) {
	t.Helper()
	last := -1
	for _, s := range seen {
		var a, p string
		var atc, atr, ptc, ptr2 int
		if n, _ := fmt.Sscanf(s, "%s tc=%d tr=%d | %s tc=%d tr=%d", &a, &atc, &atr, &p, &ptc, &ptr2); n == 6 {
			if ptr2 < last {
				t.Errorf("pending traffic went down to %d after %d", ptr2, last)
			}
			last = ptr2
		}
	}
}

// TestIncrementalRollback reverts the spec in the middle of an incremental
// upgrade: traffic and capacity go back to the active cluster, the rollback
// completes, and the pending cluster is dropped.
func TestIncrementalRollback(t *testing.T) {
	w := newWorld(t)
	readyIncremental(w)
	original := w.rs("svc").Spec.RayClusterSpec.DeepCopy()
	startUpgrade(w)
	w.stepUntil("traffic on the new cluster", func(st *rayv1.RayServiceStatuses) bool {
		return ptr.Deref(st.PendingServiceStatus.TrafficRoutedPercent, 0) >= 25
	})

	rs := w.rs("svc")
	w.update(rs, false, func() { rs.Spec.RayClusterSpec = *original })
	rs = w.waitStatus("svc", "RollbackInProgress", func(st *rayv1.RayServiceStatuses) bool {
		s, _ := conditionOf(st, rayv1.RollbackInProgress)
		return s == metav1.ConditionTrue
	})
	if c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RollbackInProgress)); c.Reason != string(rayv1.DesiredClusterSpecChanged) ||
		c.Message != "Goal state reverted to original cluster, rolling back." {
		t.Errorf("RollbackInProgress %s: %s", c.Reason, c.Message)
	}
	rs = w.stepUntil("the rollback's end", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.RayClusterName == ""
	})
	if rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" {
		t.Errorf("active after rollback %q", rs.Status.ActiveServiceStatus.RayClusterName)
	}
	if c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RollbackInProgress)); c != nil {
		t.Errorf("RollbackInProgress still set: %+v", c)
	}
	if c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.UpgradeInProgress)); c.Status != metav1.ConditionFalse ||
		c.Message != "Rollback complete, active Ray cluster exists and no pending Ray cluster" {
		t.Errorf("UpgradeInProgress %s: %s", c.Status, c.Message)
	}
	w.eventually("the route back on the old cluster alone", func() (bool, error) {
		return cmp.Equal(w.weights("svc"), []string{"svc-aaaaa-serve-svc=100"}), fmt.Errorf("weights %v", w.weights("svc"))
	})
	w.eventually("the pending cluster's deletion deadline", func() (bool, error) {
		c := w.cluster("svc-bbbbb")
		return c != nil && c.Annotations[rayv1.AnnotationDeletionDeadline] != "", nil
	})
	if diff := cmp.Diff([]string{"svc-aaaaa", "svc-bbbbb"}, w.clusterNames()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

// TestIncrementalSuspendDeletesGatewayObjects: suspending an incremental
// RayService deletes its Gateway and HTTPRoute with its clusters.
func TestIncrementalSuspendDeletesGatewayObjects(t *testing.T) {
	w := newWorld(t)
	readyIncremental(w)
	rs := w.rs("svc")
	w.update(rs, false, func() { rs.Spec.Suspend = true })
	w.waitStatus("svc", "Suspended", func(st *rayv1.RayServiceStatuses) bool {
		s, _ := conditionOf(st, rayv1.RayServiceSuspended)
		return s == metav1.ConditionTrue
	})
	if w.get("svc-gateway", &gwv1.Gateway{}) || w.get("svc-httproute", &gwv1.HTTPRoute{}) {
		t.Error("the Gateway or HTTPRoute survived the suspend")
	}
	if svc := w.service("svc-head-svc"); svc != nil {
		t.Errorf("head Service survived: %v", svc.Name)
	}
}
