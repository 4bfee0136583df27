package rayservice

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestReconcileServices covers the head and serve Services (KubeRay's
// TestReconcileServices_UpdateService): created for the first cluster
// ready to serve, left alone while they select the right cluster, moved to
// the pending cluster once all its applications run, keeping their
// ClusterIPs, and never touched while no cluster is ready.
func TestReconcileServices(t *testing.T) {
	changed := func() *wrappers.RayServiceWrapper { return rayService().ClusterSpec(newVersion()) }
	upgrading := func(w *wrappers.RayServiceWrapper) *wrappers.RayServiceWrapper {
		return noActiveApps(serving(w)).PendingCluster(pending).
			Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0)
	}
	upgradeWorld := func(pendingCluster *wrappers.RayClusterWrapper) []client.Object {
		return append(replace(idleWorld(t, upgrading(changed()).Obj()), servingCluster(t, rayService().Obj(), active).Obj()),
			pendingCluster.Obj(), headPod(pending).Obj())
	}
	firstReady := func() *wrappers.RayServiceWrapper { return initializing(rayService(), t0).PendingCluster(newCluster) }
	newClusterState := clusterState{Name: newCluster, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}
	runPasses(t, map[string]passCase{
		"the first cluster ready to serve gets both Services, and becomes active": {
			objs:  []client.Object{firstReady().Obj(), servingCluster(t, rayService().Obj(), newCluster).Obj(), headPod(newCluster).Obj()},
			setup: func(e *testEnv) { e.serveRunning(newCluster) },
			// No endpoint yet: Ready waits, the pass comes back soon.
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &initializing(rayService(), t0).ActiveCluster(newCluster).ActiveApp("app", rayv1.ApplicationStatusRunning).LastUpdateTime(t0).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{newClusterState},
			// The head Service is headless by default; the fake client
			// allocates no ClusterIP for the serve Service.
			wantServices: []serviceState{{Name: headSvc, Cluster: newCluster, ClusterIP: corev1.ClusterIPNone}, {Name: serveSvc, Cluster: newCluster}},
			wantEvents: []string{
				"Normal CreatedService Created the service ns/svc-head-svc",
				"Normal CreatedService Created the service ns/svc-serve-svc",
			},
		},
		"ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE: the head Service gets a ClusterIP": {
			objs:       []client.Object{firstReady().Obj(), servingCluster(t, rayService().Obj(), newCluster).Obj(), headPod(newCluster).Obj()},
			env:        []envOption{withOptions(func(o *Options) { o.HeadServiceClusterIP = true })},
			setup:      func(e *testEnv) { e.serveRunning(newCluster) },
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &initializing(rayService(), t0).ActiveCluster(newCluster).ActiveApp("app", rayv1.ApplicationStatusRunning).LastUpdateTime(t0).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{newClusterState},
			wantServices:   []serviceState{{Name: headSvc, Cluster: newCluster}, {Name: serveSvc, Cluster: newCluster}},
			wantEvents: []string{
				"Normal CreatedService Created the service ns/svc-head-svc",
				"Normal CreatedService Created the service ns/svc-serve-svc",
			},
		},
		"a custom serveService names the serve Service": {
			objs: []client.Object{firstReady().ServeService(wrappers.MakeService("custom-serve", "").Obj()).Obj(),
				servingCluster(t, rayService().Obj(), newCluster).Obj(), headPod(newCluster).Obj()},
			setup:      func(e *testEnv) { e.serveRunning(newCluster) },
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &initializing(rayService().ServeService(wrappers.MakeService("custom-serve", "").Obj()), t0).
				ActiveCluster(newCluster).ActiveApp("app", rayv1.ApplicationStatusRunning).LastUpdateTime(t0).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{newClusterState},
			wantServices:   []serviceState{{Name: "custom-serve", Cluster: newCluster}, {Name: headSvc, Cluster: newCluster, ClusterIP: corev1.ClusterIPNone}},
			wantEvents: []string{
				"Normal CreatedService Created the service ns/svc-head-svc",
				"Normal CreatedService Created the service ns/custom-serve",
			},
		},
		"no serve port and no serveService: an error and a Warning": {
			objs: []client.Object{
				initializing(rayService().ClusterSpec(wrappers.MakeRayClusterSpec().HeadPort("web", 8000).Obj()), t0).PendingCluster(newCluster).Obj(),
				servingCluster(t, rayService().ClusterSpec(wrappers.MakeRayClusterSpec().HeadPort("web", 8000).Obj()).Obj(), newCluster).Obj(),
				headPod(newCluster).Obj(),
			},
			setup:   func(e *testEnv) { e.serveRunning(newCluster) },
			wantErr: "port named 'serve'",
			wantStatus: &initializing(rayService().ClusterSpec(wrappers.MakeRayClusterSpec().HeadPort("web", 8000).Obj()), t0).
				PendingCluster(newCluster).PendingApp("app", rayv1.ApplicationStatusRunning).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: newCluster, AppliedConfig: appliedConfig, Version: testOperatorVersion}},
			wantServices:   []serviceState{{Name: headSvc, Cluster: newCluster, ClusterIP: corev1.ClusterIPNone}},
			wantEvents: []string{
				"Normal CreatedService Created the service ns/svc-head-svc",
				"Warning FailedToCreateService Failed to build the serve service of RayCluster svc-abcde: please specify the port named 'serve' in the Ray head container; otherwise, the Kubernetes service for Ray Serve will not be created",
			},
		},
		"the Services already select the active cluster: left alone": {
			objs:           idleWorld(t, serving(rayService()).Obj()),
			setup:          func(e *testEnv) { e.serveRunning(active) },
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     &serving(rayService()).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantServices:   idleServices(),
		},
		"the pending cluster runs every application: both Services move to it keeping their ClusterIPs, and it is promoted": {
			objs:           upgradeWorld(servingCluster(t, changed().Obj(), pending)),
			setup:          func(e *testEnv) { e.serveRunning(pending) },
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     &serving(changed()).ActiveCluster(pending).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters: []clusterState{
				{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}},
				{Name: pending, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}},
			},
			wantServices: []serviceState{{Name: headSvc, Cluster: pending, ClusterIP: "10.96.0.1"}, {Name: serveSvc, Cluster: pending, ClusterIP: "10.96.0.2"}},
			wantEvents: []string{
				"Normal UpdatedService Updated the service ns/svc-head-svc",
				"Normal UpdatedService Updated the service ns/svc-serve-svc",
			},
		},
		"the pending cluster still deploying: the Services stay on the active cluster": {
			objs: upgradeWorld(servingCluster(t, changed().Obj(), pending)),
			setup: func(e *testEnv) {
				e.serve.SetAppStatus(dashboardURL(pending), "app", rayv1.ApplicationStatusDeploying)
			},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &upgrading(changed()).PendingApp("app", rayv1.ApplicationStatusDeploying).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters: []clusterState{
				{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}},
				{Name: pending, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}},
			},
			wantServices: idleServices(),
		},
	})
}

// TestServicesOnUnknownClusterAreRepaired: Services hand-edited to select
// clusters the RayService does not know (KubeRay panics on this) are moved
// back to the serving cluster, keeping their ClusterIPs, with events.
func TestServicesOnUnknownClusterAreRepaired(t *testing.T) {
	rs := serving(rayService()).Obj()
	objs := replace(idleWorld(t, rs), service(headSvc, "svc-gone", "10.96.0.1").Obj(), service(serveSvc, "svc-unknown", "10.96.0.2").Obj())
	e := newEnv(t, objs)
	e.serveRunning(active)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	want := []serviceState{{Name: headSvc, Cluster: active, ClusterIP: "10.96.0.1"}, {Name: serveSvc, Cluster: active, ClusterIP: "10.96.0.2"}}
	if diff := cmp.Diff(want, e.serviceStates(t)); diff != "" {
		t.Errorf("Services (-want +got):\n%s", diff)
	}
	wantEvents := []string{"Normal UpdatedService Updated the service ns/svc-head-svc", "Normal UpdatedService Updated the service ns/svc-serve-svc"}
	if diff := cmp.Diff(wantEvents, e.recordedEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
