package rayservice

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// incrementalService is the test RayService upgrading incrementally with
// the autoscaler on and complete options.
func incrementalService(image string) *wrappers.RayServiceWrapper {
	spec := wrappers.MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).Autoscaling().Obj()
	spec.HeadGroupSpec.Template.Spec.Containers[0].Image = image
	w := rayService().ClusterSpec(spec).UpgradeType(rayv1.RayServiceNewClusterWithIncrementalUpgrade)
	w.Spec.UpgradeStrategy.ClusterUpgradeOptions = &rayv1.ClusterUpgradeOptions{
		MaxSurgePercent: ptr.To[int32](50), StepSizePercent: ptr.To[int32](25),
		IntervalSeconds: ptr.To[int32](30), GatewayClassName: "istio",
	}
	return w
}

// upgrading is the status of an incremental upgrade from active to
// pending, traffic and capacity given.
func upgrading(w *wrappers.RayServiceWrapper, activeTC, activeTR, pendingTC, pendingTR int32) *wrappers.RayServiceWrapper {
	w = serving(w).PendingCluster(pending).
		Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0)
	a, p := &w.Status.ActiveServiceStatus, &w.Status.PendingServiceStatus
	a.TargetCapacity, a.TrafficRoutedPercent = ptr.To(activeTC), ptr.To(activeTR)
	p.TargetCapacity, p.TrafficRoutedPercent = ptr.To(pendingTC), ptr.To(pendingTR)
	a.LastTrafficMigratedTime = &metav1.Time{Time: t0}
	p.LastTrafficMigratedTime = &metav1.Time{Time: t0}
	return w
}

// upgradeWorld is an incremental upgrade from a cluster of image "old" to
// one of image "new", both heads ready and serving, with the RayService's
// spec given by rs.
func upgradeWorld(t *testing.T, rs *rayv1.RayService) []client.Object {
	t.Helper()
	oldRS, newRS := incrementalService("old").Obj(), incrementalService("new").Obj()
	return []client.Object{
		rs,
		servingCluster(t, oldRS, active).Obj(), headPod(active).Obj(),
		servingCluster(t, newRS, pending).Obj(), headPod(pending).Obj(),
		service(headSvc, active, "10.96.0.1").Obj(),
	}
}

func (e *testEnv) hasEvent(reason string) bool {
	return slices.ContainsFunc(e.recordedEvents(), func(ev string) bool { return strings.Contains(ev, " "+reason+" ") })
}

func TestRollbackDetection(t *testing.T) {
	for name, tc := range map[string]struct {
		image       string
		rollingBack bool
		wantStatus  metav1.ConditionStatus
		wantMessage string
	}{
		"spec back to the active cluster's": {"old", false, metav1.ConditionTrue, msgRollingBack},
		"a third spec":                      {"third", false, metav1.ConditionTrue, msgRollingBackThird},
		"spec back to the pending cluster's cancels the rollback": {"new", true, "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			rs := upgrading(incrementalService(tc.image), 100, 75, 50, 25)
			if tc.rollingBack {
				rs.Condition(rayv1.RollbackInProgress, metav1.ConditionTrue, rayv1.DesiredClusterSpecChanged, msgRollingBack, t0)
			}
			e := newEnv(t, upgradeWorld(t, rs.Obj()))
			e.serveRunning(active)
			e.serveRunning(pending)
			if _, err := e.reconcile(t); err != nil {
				t.Fatal(err)
			}
			got := e.rayService(t)
			c := conditions.Get(got.Status.Conditions, rayv1.RollbackInProgress)
			switch {
			case tc.wantStatus == "" && c != nil:
				t.Errorf("RollbackInProgress still set: %+v", c)
			case tc.wantStatus != "" && (c == nil || c.Status != tc.wantStatus || c.Message != tc.wantMessage || c.Reason != string(rayv1.DesiredClusterSpecChanged)):
				t.Errorf("RollbackInProgress = %+v, want %s %q", c, tc.wantStatus, tc.wantMessage)
			}
			if got.Status.PendingServiceStatus.RayClusterName != pending {
				t.Errorf("pending cluster %q: a spec change during an incremental upgrade replaced it", got.Status.PendingServiceStatus.RayClusterName)
			}
		})
	}
}

func TestRollbackImpossibleWithoutActiveCluster(t *testing.T) {
	rs := upgrading(incrementalService("old"), 100, 75, 50, 25).Obj()
	objs := except(upgradeWorld(t, rs), active, active+"-head")
	e := newEnv(t, objs)
	e.serveRunning(pending)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if !e.hasEvent(reasonRollbackImpossible) {
		t.Error("no RollbackImpossible event")
	}
}

// TestTrafficObjects: the pass of an incremental RayService creates the
// per-cluster serve Services, the Gateway and the HTTPRoute with the next
// step's weights, and records the traffic in status.
func TestTrafficObjects(t *testing.T) {
	rs := upgrading(incrementalService("new"), 100, 100, 50, 0).Obj()
	e := newEnv(t, upgradeWorld(t, rs))
	e.serveRunning(active)
	e.serveRunning(pending)
	e.clock.Step(31 * time.Second)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gw := &gwv1.Gateway{}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: testNS, Name: "svc-gateway"}, gw); err != nil {
		t.Fatal(err)
	}
	if gw.Spec.GatewayClassName != "istio" || len(gw.OwnerReferences) != 1 || gw.OwnerReferences[0].Name != testName {
		t.Errorf("Gateway class %q owners %v", gw.Spec.GatewayClassName, gw.OwnerReferences)
	}
	_, weights := e.route(t)
	if !slices.Equal(weights, []int32{75, 25}) {
		t.Errorf("weights %v, want [75 25] (one 25 %% step towards the pending capacity)", weights)
	}
	st := e.rayService(t).Status
	if *st.PendingServiceStatus.TrafficRoutedPercent != 25 || *st.ActiveServiceStatus.TrafficRoutedPercent != 75 ||
		!st.PendingServiceStatus.LastTrafficMigratedTime.Time.Equal(e.clock.Now()) {
		t.Errorf("traffic in status: active %d pending %d at %v", *st.ActiveServiceStatus.TrafficRoutedPercent,
			*st.PendingServiceStatus.TrafficRoutedPercent, st.PendingServiceStatus.LastTrafficMigratedTime)
	}
	for _, name := range []string{active + "-serve-svc", pending + "-serve-svc"} {
		svc := e.service(t, name)
		if svc == nil || len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].Kind != rayv1.KindRayCluster {
			t.Errorf("per-cluster serve Service %s: %+v", name, svc)
		}
	}

	// A changed class updates the Gateway.
	got := e.rayService(t)
	got.Spec.UpgradeStrategy.ClusterUpgradeOptions.GatewayClassName = "envoy"
	if err := e.client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	e.recordedEvents()
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: testNS, Name: "svc-gateway"}, gw); err != nil || gw.Spec.GatewayClassName != "envoy" {
		t.Errorf("Gateway class after the change: %q (%v)", gw.Spec.GatewayClassName, err)
	}
	if !e.hasEvent(reasonUpdatedGateway) {
		t.Error("no UpdatedGateway event")
	}
}

// TestNoGatewayAPI: without the Gateway API types the pass fails with an
// error that says what is missing.
func TestNoGatewayAPI(t *testing.T) {
	rs := serving(incrementalService("new")).Obj()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	bare := fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&corev1.Pod{}, clusterindex.Pods, clusterindex.ClusterOf).
		WithObjects(rs, servingCluster(t, rs, active).Obj(), headPod(active).Obj()).
		WithStatusSubresource(&rayv1.RayService{}, &rayv1.RayCluster{}).Build()
	e := newEnv(t, nil)
	e.r = New(Deps{
		Core: managerdeps.Core{Client: bare, Recorder: e.events, Clock: e.clock}, Dashboards: e.serve.Provider(), ProxyHealth: e.proxyHealth,
		NameSuffix: func() string { return testSuffix }}, e.r.opts)
	e.serveRunning(active)
	_, err := e.reconcile(t)
	if err == nil || !strings.Contains(err.Error(), "incremental upgrades need the Gateway API") {
		t.Errorf("error = %v", err)
	}
}

// service reads a Service of the test namespace; nil when missing.
func (e *testEnv) service(t *testing.T, name string) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: name}, svc); err != nil {
		return nil
	}
	return svc
}

// TestRouteAheadOfStatusHoldsItsWeights: the operator moved the HTTPRoute
// one step (75/25) and died before it wrote the status recording that step.
// The restarted operator's first pass, before the next step is due, must
// keep the route where it is and adopt its weights into the status; it must
// not build the route from the status it finds (100/0) and send traffic back
// to the old cluster (the local e2e faults suite caught this: 50/50, then
// 100/0 after a kill).
func TestRouteAheadOfStatusHoldsItsWeights(t *testing.T) {
	// The route as the step wrote it: one pass 31 s after the last move.
	first := newEnv(t, upgradeWorld(t, upgrading(incrementalService("new"), 100, 100, 50, 0).Obj()))
	first.serveRunning(active)
	first.serveRunning(pending)
	first.clock.Step(31 * time.Second)
	if _, err := first.reconcile(t); err != nil {
		t.Fatal(err)
	}
	route, _ := first.route(t)
	route.ResourceVersion = ""

	// The restarted operator: the status still says 100/0 since t0, and no
	// step is due.
	rs := upgrading(incrementalService("new"), 100, 100, 50, 0).Obj()
	e := newEnv(t, append(upgradeWorld(t, rs), route))
	e.serveRunning(active)
	e.serveRunning(pending)
	e.clock.Step(5 * time.Second)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if _, weights := e.route(t); !slices.Equal(weights, []int32{75, 25}) {
		t.Errorf("route weights %v after the restart, want [75 25]: traffic moved back to the old cluster", weights)
	}
	st := e.rayService(t).Status
	if got := ptr.Deref(st.PendingServiceStatus.TrafficRoutedPercent, -1); got != 25 {
		t.Errorf("pending cluster's traffic in status %d, want the route's 25", got)
	}
	if got := ptr.Deref(st.ActiveServiceStatus.TrafficRoutedPercent, -1); got != 75 {
		t.Errorf("active cluster's traffic in status %d, want the route's 75", got)
	}
}

// TestOldClusterKeepsCapacityUntilItsTrafficIsGone: traffic moved to 50/50
// and the new cluster's capacity is 50, so the old cluster's capacity is
// due to go from 100 to 50; it goes only once the move is an interval
// (30 s) old, and the pass before says when to look again. A gateway
// applies a route after it is written: capacity taken from the old cluster
// at once (as KubeRay does) leaves the requests still sent there to Serve
// with no replica (the local e2e faults suite lost one that way: a 5 s
// timeout at target_capacity 0).
func TestOldClusterKeepsCapacityUntilItsTrafficIsGone(t *testing.T) {
	rs := upgrading(incrementalService("new"), 100, 50, 50, 50).Obj()
	e := newEnv(t, append(upgradeWorld(t, rs), trafficObjectsAt(t, rs, 50, 50)...))
	e.serveRunning(active)
	e.serveRunning(pending)
	puts := func() int { return e.serve.Calls(dashboardURL(active), dashboardtest.OpUpdateDeployments) }
	activeTC := func() int32 { return ptr.Deref(e.rayService(t).Status.ActiveServiceStatus.TargetCapacity, -1) }

	e.clock.Step(10 * time.Second)
	requeue := e.pass(t)
	if puts() != 0 || activeTC() != 100 {
		t.Fatalf("10 s after the traffic moved: old cluster's capacity %d after %d PUTs, want 100 and none", activeTC(), puts())
	}
	if requeue <= 0 || requeue > 20*time.Second {
		t.Errorf("requeue after %v, want within the 20 s left of the interval", requeue)
	}
	e.clock.Step(20 * time.Second)
	e.pass(t)
	if puts() != 1 || activeTC() != 50 {
		t.Fatalf("an interval after the traffic moved: old cluster's capacity %d after %d PUTs, want 50 after 1", activeTC(), puts())
	}
}

// TestCapacityWaitsForTheGatewayToSeeTheRoute: a route whose conditions
// were written for an earlier generation (the gateway controller has not
// seen the last weights) moves no capacity, and the pass looks again at
// the in-flight interval; once the conditions name the route's generation
// the step is taken.
func TestCapacityWaitsForTheGatewayToSeeTheRoute(t *testing.T) {
	rs := upgrading(incrementalService("new"), 100, 100, 0, 0).Obj()
	objs := readyTrafficObjects(t, rs)
	route := objs[1].(*gwv1.HTTPRoute)
	route.Generation = 2
	for i := range route.Status.Parents[0].Conditions {
		route.Status.Parents[0].Conditions[i].ObservedGeneration = 1
	}
	e := newEnv(t, append(upgradeWorld(t, rs), objs...))
	e.serveRunning(active)
	e.serveRunning(pending)
	pendingTC := func() int32 { return ptr.Deref(e.rayService(t).Status.PendingServiceStatus.TargetCapacity, -1) }

	if requeue := e.pass(t); pendingTC() != 0 || requeue != DefaultInFlightRequeue {
		t.Fatalf("route seen at generation 1 of 2: new cluster's capacity %d, requeue %v; want 0 and %v", pendingTC(), requeue, DefaultInFlightRequeue)
	}
	got, _ := e.route(t)
	for i := range got.Status.Parents[0].Conditions {
		got.Status.Parents[0].Conditions[i].ObservedGeneration = got.Generation
	}
	// The fake client keeps no status subresource for routes: a plain update
	// writes the gateway controller's conditions.
	if err := e.client.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	e.pass(t)
	if pendingTC() != 50 {
		t.Fatalf("route seen at its generation: new cluster's capacity %d, want 50", pendingTC())
	}
}

// route reads the RayService's HTTPRoute and the weights of its backends,
// in order.
func (e *testEnv) route(t *testing.T) (*gwv1.HTTPRoute, []int32) {
	t.Helper()
	route := &gwv1.HTTPRoute{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: "svc-httproute"}, route); err != nil {
		t.Fatal(err)
	}
	var weights []int32
	for _, b := range route.Spec.Rules[0].BackendRefs {
		weights = append(weights, *b.Weight)
	}
	return route, weights
}
