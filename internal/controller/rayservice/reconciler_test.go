package rayservice

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestNewDefaults checks the defaults New fills in.
func TestNewDefaults(t *testing.T) {
	r := New(Deps{}, Options{})
	got := struct {
		InFlight, Idle time.Duration
		Version        string
		SuffixLen      int
		Defaults       []bool
	}{r.opts.InFlightRequeue, r.opts.IdleRequeue, r.opts.OperatorVersion, len(r.NameSuffix()),
		[]bool{r.Clock != nil, r.ProxyHealth != nil, r.opts.Features != nil}}
	want := struct {
		InFlight, Idle time.Duration
		Version        string
		SuffixLen      int
		Defaults       []bool
	}{2 * time.Second, 30 * time.Second, testOperatorVersion, 5, []bool{true, true, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	r = New(Deps{}, Options{InFlightRequeue: time.Second, IdleRequeue: time.Minute, OperatorVersion: "v1.2.3"})
	if r.opts.InFlightRequeue != time.Second || r.opts.IdleRequeue != time.Minute || r.opts.OperatorVersion != "v1.2.3" {
		t.Errorf("options given were not kept: %+v", r.opts)
	}
}

// TestReconcile covers whole passes from the states a RayService goes
// through: first sight, creation, promotion and the idle state.
func TestReconcile(t *testing.T) {
	runPasses(t, map[string]passCase{
		"a missing RayService is not an error": {},
		"first pass only adds the finalizer": {
			objs:           []client.Object{wrappers.MakeRayService(testName, testNS).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"a new RayService names its first cluster and starts Initializing": {
			objs:           []client.Object{rayService().Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &initializing(rayService().PendingCluster(newCluster), t0).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"the active cluster deleted under a Ready RayService: a new cluster is named": {
			// The head Pod stays until garbage collection takes it.
			objs:       except(idleWorld(t, serving(rayService()).Obj()), active),
			setup:      func(e *testEnv) { e.serveRunning(active) },
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &noActiveApps(serving(rayService())).PendingCluster(newCluster).LastUpdateTime(t0).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantServices:   idleServices(),
		},
		"the pending cluster deleted mid-upgrade: created again under its name": {
			objs: idleWorld(t, noActiveApps(serving(rayService().ClusterSpec(newVersion()))).PendingCluster(pending).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0).Obj()),
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &noActiveApps(serving(rayService().ClusterSpec(newVersion()))).PendingCluster(pending).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters: []clusterState{
				{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}},
				{Name: pending, Version: testOperatorVersion, Workers: []string{"small"}},
			},
			wantServices: idleServices(),
			wantEvents:   []string{"Normal CreatedRayCluster Created RayCluster ns/svc-pending"},
		},
		"the serve endpoints drop to none: Ready False, and the pass comes back soon": {
			objs:       except(idleWorld(t, serving(rayService()).Obj()), "svc-serve-svc-1"),
			setup:      func(e *testEnv) { e.serveRunning(active) },
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &serving(rayService()).NumServeEndpoints(0).ServiceStatus(rayv1.NotRunning).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, msgZeroEndpoints, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantServices:   idleServices(),
		},
		"the active head Pod missing: the pass goes on (KubeRay stops with an error), and comes back soon": {
			objs:           except(idleWorld(t, serving(rayService()).Obj()), "svc-active-head"),
			setup:          func(e *testEnv) { e.serveRunning(active) },
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &serving(rayService()).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantServices:   idleServices(),
		},
		"a status write that conflicts is retried soon, without an error": {
			objs: []client.Object{rayService().Obj()},
			env: []envOption{withInterceptors(interceptor.Funcs{
				SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
					return apierrors.NewConflict(rayv1.GroupVersion.WithResource("rayservices").GroupResource(), testName, errors.New("stale"))
				},
			})},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"a status write that fails is an error": {
			objs: []client.Object{rayService().Obj()},
			env: []envOption{withInterceptors(interceptor.Funcs{
				SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
					return errors.New("etcd down")
				},
			})},
			wantErr:        "updating the status: etcd down",
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
	})
}

// TestIdlePass checks that the pass of an idle RayService (Ready, every
// application RUNNING, no pending cluster) writes nothing, calls Serve
// only to read, and comes back at the idle interval. The Reconciler is new,
// as after an operator restart: the config applied to the cluster is read
// from the cluster, so it is not applied again (unlike KubeRay's in-memory
// cache, KubeRay #4717).
func TestIdlePass(t *testing.T) {
	rs := serving(rayService()).Obj()
	e := newEnv(t, idleWorld(t, rs))
	e.serveRunning(active)
	before := e.rayService(t).ResourceVersion
	for pass := range 3 {
		result, err := e.reconcile(t)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ctrl.Result{RequeueAfter: DefaultIdleRequeue}, result); diff != "" {
			t.Errorf("pass %d: result (-want +got):\n%s", pass, diff)
		}
		e.clock.Step(DefaultIdleRequeue)
	}
	if got := e.rayService(t).ResourceVersion; got != before {
		t.Errorf("an idle pass wrote the RayService (resourceVersion %s -> %s)", before, got)
	}
	if got := e.puts(active); len(got) != 0 {
		t.Errorf("serve configs PUT: %v", got)
	}
	if got := e.recordedEvents(); len(got) != 0 {
		t.Errorf("events: %v", got)
	}
}

// flowStep is one step of a RayService's life: what changes in the world
// (the test plays the RayCluster and EndpointSlice controllers, Serve and
// the user), then one pass, and what the RayService must show after it.
type flowStep struct {
	name string
	do   func(t *testing.T, e *testEnv)
	// wantActive and wantPending are the cluster names in status.
	wantActive, wantPending string
	// wantReady and wantUpgrade are the reasons of Ready and
	// UpgradeInProgress.
	wantReady, wantUpgrade rayv1.RayServiceConditionReason
	// wantServing is the cluster the Services select ("" for none).
	wantServing string
	// wantClusters are the clusters that exist, by name.
	wantClusters []string
	wantRequeue  time.Duration
}

// TestBlueGreenFlow walks a RayService from creation to Ready, through a
// blue/green upgrade to the deletion of the old cluster, one pass per step.
func TestBlueGreenFlow(t *testing.T) {
	e := newEnv(t, []client.Object{rayService().Obj()})
	suffixes := []string{"aaaaa", "bbbbb"}
	e.r.NameSuffix = func() string {
		s := suffixes[0]
		suffixes = suffixes[1:]
		return s
	}
	const blue, green = "svc-aaaaa", "svc-bbbbb"
	steps := []flowStep{
		{name: "the first cluster is named", wantPending: blue, wantReady: rayv1.RayServiceInitializing,
			wantUpgrade: rayv1.RayServiceInitializing, wantRequeue: DefaultInFlightRequeue},
		{name: "and created", wantPending: blue, wantReady: rayv1.RayServiceInitializing, wantUpgrade: rayv1.RayServiceInitializing,
			wantClusters: []string{blue}, wantRequeue: DefaultInFlightRequeue},
		{name: "its head comes up: the config is applied", do: bringUp(blue), wantPending: blue,
			wantReady: rayv1.RayServiceInitializing, wantUpgrade: rayv1.RayServiceInitializing, wantClusters: []string{blue}, wantRequeue: DefaultInFlightRequeue},
		{name: "its applications run: the Services select it and it becomes active", wantActive: blue,
			wantReady: rayv1.RayServiceInitializing, wantUpgrade: rayv1.NoPendingCluster, wantServing: blue, wantClusters: []string{blue}, wantRequeue: DefaultInFlightRequeue},
		{name: "an endpoint serves: Ready, and idle", do: publish("a", "pod-1"), wantActive: blue,
			wantReady: rayv1.NonZeroServeEndpoints, wantUpgrade: rayv1.NoPendingCluster, wantServing: blue, wantClusters: []string{blue}, wantRequeue: DefaultIdleRequeue},
		{name: "a new Ray version: a new cluster is named", do: editSpec(newVersion()), wantActive: blue, wantPending: green,
			wantReady: rayv1.NonZeroServeEndpoints, wantUpgrade: rayv1.BothActivePendingClustersExist, wantServing: blue, wantClusters: []string{blue}, wantRequeue: DefaultInFlightRequeue},
		{name: "and created", wantActive: blue, wantPending: green, wantReady: rayv1.NonZeroServeEndpoints, wantUpgrade: rayv1.BothActivePendingClustersExist,
			wantServing: blue, wantClusters: []string{blue, green}, wantRequeue: DefaultInFlightRequeue},
		{name: "its head comes up: the config is applied to it", do: bringUp(green), wantActive: blue, wantPending: green,
			wantReady: rayv1.NonZeroServeEndpoints, wantUpgrade: rayv1.BothActivePendingClustersExist, wantServing: blue, wantClusters: []string{blue, green}, wantRequeue: DefaultInFlightRequeue},
		{name: "its applications run: the Services switch and it is promoted", wantActive: green,
			wantReady: rayv1.NonZeroServeEndpoints, wantUpgrade: rayv1.NoPendingCluster, wantServing: green, wantClusters: []string{blue, green}, wantRequeue: DefaultIdleRequeue},
		{name: "the old cluster gets its deadline", wantActive: green, wantReady: rayv1.NonZeroServeEndpoints, wantUpgrade: rayv1.NoPendingCluster,
			wantServing: green, wantClusters: []string{blue, green}, wantRequeue: DefaultIdleRequeue},
		{name: "and is deleted once it passed", do: advance(DefaultClusterDeletionDelay), wantActive: green, wantReady: rayv1.NonZeroServeEndpoints,
			wantUpgrade: rayv1.NoPendingCluster, wantServing: green, wantClusters: []string{green}, wantRequeue: DefaultInFlightRequeue},
		{name: "then idle", wantActive: green, wantReady: rayv1.NonZeroServeEndpoints, wantUpgrade: rayv1.NoPendingCluster,
			wantServing: green, wantClusters: []string{green}, wantRequeue: DefaultIdleRequeue},
	}
	for i, st := range steps {
		if st.do != nil {
			st.do(t, e)
		}
		result, err := e.reconcile(t)
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, st.name, err)
		}
		rs := e.rayService(t)
		var clusters []string
		for _, c := range e.clusterStates(t) {
			clusters = append(clusters, c.Name)
		}
		serving := ""
		for _, svc := range e.serviceStates(t) {
			if svc.Name == headSvc {
				serving = svc.Cluster
			}
		}
		got := flowStep{name: st.name, wantActive: rs.Status.ActiveServiceStatus.RayClusterName, wantPending: rs.Status.PendingServiceStatus.RayClusterName,
			wantReady: reasonOf(rs, rayv1.RayServiceReady), wantUpgrade: reasonOf(rs, rayv1.UpgradeInProgress),
			wantServing: serving, wantClusters: clusters, wantRequeue: result.RequeueAfter}
		st.do = nil
		if diff := cmp.Diff(st, got, cmp.AllowUnexported(flowStep{}), cmpopts.IgnoreFields(flowStep{}, "do"), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("step %d (%s) (-want +got):\n%s", i, st.name, diff)
		}
	}
	// Each cluster got the config once; the old one never got anything
	// meant for the new one.
	if diff := cmp.Diff(map[string]int{blue: 1, green: 1}, e.puts(blue, green)); diff != "" {
		t.Errorf("serve configs PUT (-want +got):\n%s", diff)
	}
}

// reasonOf is the reason of a condition of rs ("" when absent).
func reasonOf(rs *rayv1.RayService, t rayv1.RayServiceConditionType) rayv1.RayServiceConditionReason {
	if c := conditions.Get(rs.Status.Conditions, t); c != nil {
		return rayv1.RayServiceConditionReason(c.Reason)
	}
	return ""
}

// bringUp plays the RayCluster controller: the cluster's head Pod runs
// and HeadPodReady is True.
func bringUp(cluster string) func(*testing.T, *testEnv) {
	return func(t *testing.T, e *testEnv) {
		t.Helper()
		ctx := context.Background()
		if err := e.client.Create(ctx, headPod(cluster).Obj()); err != nil {
			t.Fatal(err)
		}
		c := &rayv1.RayCluster{}
		if err := e.client.Get(ctx, client.ObjectKey{Namespace: testNS, Name: cluster}, c); err != nil {
			t.Fatal(err)
		}
		c.Status = wrappers.MakeRayCluster(cluster, testNS).State(rayv1.Ready).HeadPodReady().Obj().Status
		if err := e.client.Status().Update(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
}

// publish plays the EndpointSlice controller: a slice of the serve
// Service with ready Pods.
func publish(name string, podUIDs ...string) func(*testing.T, *testEnv) {
	return func(t *testing.T, e *testEnv) {
		t.Helper()
		if err := e.client.Create(context.Background(), endpoints(name, podUIDs...).Obj()); err != nil {
			t.Fatal(err)
		}
	}
}

// editSpec plays the user: a new cluster spec.
func editSpec(spec *rayv1.RayClusterSpec) func(*testing.T, *testEnv) {
	return func(t *testing.T, e *testEnv) {
		t.Helper()
		rs := e.rayService(t)
		rs.Spec.RayClusterSpec = *spec
		rs.Generation++
		if err := e.client.Update(context.Background(), rs); err != nil {
			t.Fatal(err)
		}
	}
}

// advance moves the clock.
func advance(d time.Duration) func(*testing.T, *testEnv) {
	return func(_ *testing.T, e *testEnv) { e.clock.Step(d) }
}
