package rayservice

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// suspendRequested is the status a pass leaves when spec.suspend asks for
// a suspension: Suspending staged, the other conditions SuspendInProgress,
// the clusters forgotten.
func suspendRequested(w *wrappers.RayServiceWrapper, at time.Time) *wrappers.RayServiceWrapper {
	w.Status.ActiveServiceStatus, w.Status.PendingServiceStatus = rayv1.RayServiceStatus{}, rayv1.RayServiceStatus{}
	return w.NumServeEndpoints(0).ServiceStatus(rayv1.NotRunning).
		Condition(rayv1.RayServiceSuspending, metav1.ConditionTrue, rayv1.SuspendRequested, msgSuspendRequested, at).
		Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.SuspendInProgress, msgSuspendInProgress, at).
		Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.SuspendInProgress, msgSuspendInProgress, at).
		Condition(rayv1.RollbackInProgress, metav1.ConditionFalse, rayv1.SuspendInProgress, msgSuspendInProgress, at)
}

// suspended is the status of a RayService whose suspension was requested
// at requested and completed at completed. Ready, UpgradeInProgress and
// RollbackInProgress stayed False throughout, so their transition time is
// the request's.
func suspended(w *wrappers.RayServiceWrapper, requested, completed time.Time) *wrappers.RayServiceWrapper {
	return suspendRequested(w, requested).
		Condition(rayv1.RayServiceSuspending, metav1.ConditionFalse, rayv1.SuspendComplete, msgSuspendComplete, completed).
		Condition(rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete, msgSuspendComplete, completed).
		Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.SuspendComplete, msgSuspendComplete, requested).
		Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.SuspendComplete, msgSuspendComplete, requested).
		Condition(rayv1.RollbackInProgress, metav1.ConditionFalse, rayv1.SuspendComplete, msgSuspendComplete, requested)
}

// TestSuspend covers spec.suspend's state machine, one pass per state
// (KubeRay's TestHandleSuspendObservedGeneration among them: every pass
// records the generation it acted on, so a suspended RayService does not
// look stale to tools that compare observedGeneration).
func TestSuspend(t *testing.T) {
	earlier := t0.Add(-time.Hour)
	// The RayService was suspended at generation 1; spec.suspend moved it
	// to generation 2.
	gen2 := func() *wrappers.RayServiceWrapper { return rayService().Generation(2) }
	runPasses(t, map[string]passCase{
		"spec.suspend on a serving RayService: Suspending is staged, nothing deleted yet": {
			objs:       idleWorld(t, serving(rayService()).Generation(2).Suspend(true).Obj()),
			setup:      func(e *testEnv) { e.serveRunning(active) },
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &suspendRequested(serving(gen2().Suspend(true)), t0).
				// The conditions were set at generation 2, status.observedGeneration too.
				ObservedGeneration(2).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantServices:   idleServices(),
		},
		"a RayService created suspended stages Suspending and creates nothing": {
			objs:           []client.Object{rayService().Suspend(true).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &suspendRequested(rayService().Suspend(true), t0).ObservedGeneration(1).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"Suspending persisted: the clusters and Services are deleted, Suspending stays while they go": {
			objs: append(idleWorld(t, suspendRequested(rayService().Suspend(true), earlier).ObservedGeneration(1).Obj()),
				clusterOf(t, rayService().Obj(), pending).Obj()),
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &suspendRequested(rayService().Suspend(true), earlier).ObservedGeneration(1).LastUpdateTime(t0).
				Condition(rayv1.RayServiceSuspending, metav1.ConditionTrue, rayv1.SuspendInProgress, msgSuspendInProgress, earlier).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantEvents: []string{
				"Normal DeletedRayCluster Deleted RayCluster ns/svc-active",
				"Normal DeletedRayCluster Deleted RayCluster ns/svc-pending",
				"Normal DeletedService Deleted the service ns/svc-head-svc",
				"Normal DeletedService Deleted the service ns/svc-serve-svc",
			},
		},
		"Suspending persisted, a cluster still terminating: Suspending stays": {
			objs: []client.Object{
				suspendRequested(rayService().Suspend(true), earlier).ObservedGeneration(1).Obj(),
				clusterOf(t, rayService().Obj(), active).Terminating(earlier).Obj(),
			},
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &suspendRequested(rayService().Suspend(true), earlier).ObservedGeneration(1).LastUpdateTime(t0).
				Condition(rayv1.RayServiceSuspending, metav1.ConditionTrue, rayv1.SuspendInProgress, msgSuspendInProgress, earlier).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, Version: testOperatorVersion, Workers: []string{"small"}, Terminating: true}},
		},
		"Suspending persisted, nothing left: Suspended, and nothing more to do": {
			objs:           []client.Object{suspendRequested(gen2().Suspend(true), earlier).ObservedGeneration(1).Obj()},
			wantStatus:     &suspended(gen2().Suspend(true), earlier, t0).ObservedGeneration(2).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"Suspending persisted and spec.suspend flipped back: the suspension completes, then a pass resumes": {
			objs:           []client.Object{suspendRequested(gen2(), earlier).ObservedGeneration(1).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &suspended(gen2(), earlier, t0).ObservedGeneration(2).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"Suspended and still asked to be: nothing happens but the generation is observed": {
			objs:           []client.Object{suspended(gen2().Suspend(true), earlier, earlier).ObservedGeneration(1).Obj()},
			wantStatus:     &suspended(gen2().Suspend(true), earlier, earlier).ObservedGeneration(2).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"Suspended and still asked to be, generation observed: no write, no requeue": {
			objs:           []client.Object{suspended(rayService().Suspend(true), earlier, earlier).ObservedGeneration(1).Obj()},
			wantStatus:     &suspended(rayService().Suspend(true), earlier, earlier).ObservedGeneration(1).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"resume: Ready and UpgradeInProgress restart from Initializing now, and the pass goes on": {
			objs:       []client.Object{suspended(gen2(), earlier, earlier).ObservedGeneration(1).Obj()},
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &suspended(gen2(), earlier, earlier).ObservedGeneration(2).LastUpdateTime(t0).PendingCluster(newCluster).
				Condition(rayv1.RayServiceSuspended, metav1.ConditionFalse, rayv1.RayServiceResumed, msgResumed, t0).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, t0).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"resume re-arms the initializing timeout from now": {
			objs:       []client.Object{suspended(gen2().Annotation(rayv1.AnnotationInitializingTimeout, "10m"), t0.Add(-24*time.Hour), t0.Add(-24*time.Hour)).ObservedGeneration(1).Obj()},
			wantResult: ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus: &suspended(gen2().Annotation(rayv1.AnnotationInitializingTimeout, "10m"), t0.Add(-24*time.Hour), t0.Add(-24*time.Hour)).
				ObservedGeneration(2).LastUpdateTime(t0).PendingCluster(newCluster).
				Condition(rayv1.RayServiceSuspended, metav1.ConditionFalse, rayv1.RayServiceResumed, msgResumed, t0).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, t0).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"a cluster that cannot be deleted: an error, a Warning, Suspending kept": {
			objs: []client.Object{
				suspendRequested(rayService().Suspend(true), earlier).ObservedGeneration(1).Obj(),
				clusterOf(t, rayService().Obj(), active).Obj(),
			},
			env: []envOption{withInterceptors(interceptor.Funcs{
				Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error {
					return errors.New("boom")
				},
			})},
			wantErr:        "boom",
			wantStatus:     &suspendRequested(rayService().Suspend(true), earlier).ObservedGeneration(1).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			// The first step gave the no longer named cluster a deadline.
			wantClusters: []clusterState{{Name: active, Version: testOperatorVersion, Workers: []string{"small"}, DeletionDeadline: deadline(t0.Add(time.Minute))}},
			wantEvents:   []string{"Warning FailedToDeleteRayCluster Failed to delete RayCluster ns/svc-active: boom"},
		},
	})
}
