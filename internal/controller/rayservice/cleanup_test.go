package rayservice

import (
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestCleanUpClusters covers the deletion of clusters that no longer serve
// (KubeRay's TestRayClusterDeletionDelaySeconds, with the deadline kept on
// the cluster as ray.io/deletion-deadline instead of in memory): it is set
// once to now + rayClusterDeletionDelaySeconds (60 s unset), never moved by
// later passes, the cluster is deleted once it passed, and it is removed
// from a cluster that serves again.
func TestCleanUpClusters(t *testing.T) {
	// idle is an idle RayService with the given spec changes, and the
	// world around it plus extra objects.
	idle := func(mutate func(*wrappers.RayServiceWrapper), extra ...client.Object) []client.Object {
		w := serving(rayService())
		if mutate != nil {
			mutate(w)
		}
		return append(idleWorld(t, w.Obj()), extra...)
	}
	oldOf := func() *wrappers.RayClusterWrapper { return servingCluster(t, rayService().Obj(), oldCluster) }
	activeState := clusterState{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}
	oldState := func(deadline string) clusterState {
		return clusterState{Name: oldCluster, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}, DeletionDeadline: deadline}
	}
	delay := func(s int32) func(*wrappers.RayServiceWrapper) {
		return func(w *wrappers.RayServiceWrapper) { w.DeletionDelaySeconds(s) }
	}
	runningActive := func(e *testEnv) { e.serveRunning(active) }
	statusOf := func(mutate func(*wrappers.RayServiceWrapper)) *rayv1.RayServiceStatuses {
		w := serving(rayService())
		if mutate != nil {
			mutate(w)
		}
		return &w.Obj().Status
	}
	runPasses(t, map[string]passCase{
		"an old cluster gets a deadline 60 s away by default": {
			objs:  idle(nil, oldOf().Obj()),
			setup: runningActive,
			// The idle interval comes first.
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     statusOf(nil),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeState, oldState(deadline(t0.Add(60 * time.Second)))},
			wantServices:   idleServices(),
		},
		"rayClusterDeletionDelaySeconds sets the deadline, and the pass comes back then": {
			objs:           idle(delay(5), oldOf().Obj()),
			setup:          runningActive,
			wantResult:     ctrl.Result{RequeueAfter: 5 * time.Second},
			wantStatus:     statusOf(delay(5)),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeState, oldState(deadline(t0.Add(5 * time.Second)))},
			wantServices:   idleServices(),
		},
		"a delay of 0 deletes at once": {
			objs:           idle(delay(0), oldOf().Obj()),
			setup:          runningActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     statusOf(delay(0)),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeState},
			wantServices:   idleServices(),
			wantEvents:     []string{"Normal DeletedRayCluster Deleted RayCluster ns/svc-old"},
		},
		"a recorded deadline is not moved, by a later pass nor by a shorter delay": {
			objs:           idle(delay(5), oldOf().Annotation(rayv1.AnnotationDeletionDeadline, deadline(t0.Add(20*time.Second))).Obj()),
			setup:          runningActive,
			wantResult:     ctrl.Result{RequeueAfter: 20 * time.Second},
			wantStatus:     statusOf(delay(5)),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeState, oldState(deadline(t0.Add(20 * time.Second)))},
			wantServices:   idleServices(),
		},
		"a passed deadline deletes the cluster": {
			objs:           idle(nil, oldOf().Annotation(rayv1.AnnotationDeletionDeadline, deadline(t0)).Obj()),
			setup:          runningActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     statusOf(nil),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeState},
			wantServices:   idleServices(),
			wantEvents:     []string{"Normal DeletedRayCluster Deleted RayCluster ns/svc-old"},
		},
		"an unreadable deadline is replaced by a new one": {
			objs:           idle(nil, oldOf().Annotation(rayv1.AnnotationDeletionDeadline, "soon").Obj()),
			setup:          runningActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     statusOf(nil),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeState, oldState(deadline(t0.Add(60 * time.Second)))},
			wantServices:   idleServices(),
		},
		"a cluster that serves again loses its deadline": {
			objs: replace(idle(nil), servingCluster(t, rayService().Obj(), active).
				Annotation(rayv1.AnnotationDeletionDeadline, deadline(t0.Add(-time.Hour))).Obj()),
			setup:          runningActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     statusOf(nil),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeState},
			wantServices:   idleServices(),
		},
		"a terminating old cluster is left to finish": {
			objs:           idle(nil, oldOf().Terminating(t0).Obj()),
			setup:          runningActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     statusOf(nil),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeState, {Name: oldCluster, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}, Terminating: true}},
			wantServices:   idleServices(),
		},
		"clusters of other owners are not touched": {
			objs: idle(nil,
				wrappers.MakeRayCluster("mine", testNS).Obj(),
				wrappers.MakeRayCluster("other-svc-abcde", testNS).OwnedBy(wrappers.MakeRayService("other", testNS).Obj(), rayv1.KindRayService).Obj(),
				wrappers.MakeRayCluster("job-cluster", testNS).OwnedBy(wrappers.MakeRayService(testName, testNS).Obj(), rayv1.KindRayJob).Obj()),
			setup:          runningActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     statusOf(nil),
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters: []clusterState{
				{Name: "job-cluster", Workers: []string{"small"}},
				{Name: "mine", Workers: []string{"small"}},
				{Name: "other-svc-abcde", Workers: []string{"small"}},
				activeState,
			},
			wantServices: idleServices(),
		},
	})
}

// TestDeletionDeadlineSurvivesARestart checks that a deadline counts from
// the first time a cluster was seen not serving, across Reconcilers (an
// operator restart), and that the cluster goes once it passed.
func TestDeletionDeadlineSurvivesARestart(t *testing.T) {
	rs := serving(rayService()).Obj()
	objs := append(idleWorld(t, rs), servingCluster(t, rs, oldCluster).Obj())
	e := newEnv(t, objs)
	e.serveRunning(active)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(45 * time.Second)
	// A new Reconciler over the same objects, as after a restart.
	e.r = New(e.r.Deps, e.r.opts)
	result, err := e.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if result.RequeueAfter != 15*time.Second {
		t.Errorf("requeue after %v, want the 15 s left of the first deadline", result.RequeueAfter)
	}
	e.clock.Step(15 * time.Second)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range e.clusterStates(t) {
		names = append(names, c.Name)
	}
	if len(names) != 1 || names[0] != active {
		t.Errorf("clusters %v, want only %s once the deadline passed", names, active)
	}
}
