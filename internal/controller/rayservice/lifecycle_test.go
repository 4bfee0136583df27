package rayservice

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/invalidspec"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestManagedBy covers spec.managedBy (KubeRay's
// Test_RayServiceReconcileManagedBy): a RayService managed by another
// controller, or by "", is left entirely alone and not requeued.
func TestManagedBy(t *testing.T) {
	runPasses(t, map[string]passCase{
		"managed by MultiKueue: nothing, not even the finalizer": {
			objs:       []client.Object{wrappers.MakeRayService(testName, testNS).ManagedBy("kueue.x-k8s.io/multikueue").Obj()},
			wantStatus: &rayv1.RayServiceStatuses{},
		},
		"managed by an empty string: an external manager too": {
			objs:       []client.Object{wrappers.MakeRayService(testName, testNS).ManagedBy("").Obj()},
			wantStatus: &rayv1.RayServiceStatuses{},
		},
		"managed by MultiKueue while being deleted: the clusters are not ours to delete": {
			objs: []client.Object{
				wrappers.MakeRayService(testName, testNS).ManagedBy("kueue.x-k8s.io/multikueue").Finalizer(rayv1.RayServiceFinalizer).Deleted(t0).Obj(),
				clusterOf(t, rayService().Obj(), active).Obj(),
			},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, Version: testOperatorVersion, Workers: []string{"small"}}},
		},
		"managed by this operator: reconciled": {
			objs:           []client.Object{wrappers.MakeRayService(testName, testNS).ManagedBy(rayv1.KubeRayController).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
	})
}

// TestRayServiceFinalizer covers ray.io/rayservice-finalizer (KubeRay's
// TestRayServiceFinalizer): added first; on deletion every cluster is
// deleted at once, whatever its deletion delay, and the finalizer stays
// until none is left.
func TestRayServiceFinalizer(t *testing.T) {
	deleted := func() *wrappers.RayServiceWrapper {
		return serving(rayService()).DeletionDelaySeconds(600).Deleted(t0)
	}
	runPasses(t, map[string]passCase{
		"added on first sight": {
			objs:           []client.Object{wrappers.MakeRayService(testName, testNS).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"added next to others": {
			objs:           []client.Object{wrappers.MakeRayService(testName, testNS).Finalizer("user/keep").Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{"user/keep", rayv1.RayServiceFinalizer},
		},
		"deleted: every cluster deleted at once, the finalizer kept meanwhile": {
			objs: []client.Object{deleted().Obj(),
				servingCluster(t, rayService().Obj(), active).Obj(),
				clusterOf(t, rayService().Obj(), oldCluster).Annotation(rayv1.AnnotationDeletionDeadline, deadline(t0.Add(time.Hour))).Obj(),
				service(headSvc, active, "10.96.0.1").Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &deleted().Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			// Services go with the RayService through their owner reference.
			wantServices: []serviceState{{Name: headSvc, Cluster: active, ClusterIP: "10.96.0.1"}},
			wantEvents: []string{
				"Normal DeletedRayCluster Deleted RayCluster ns/svc-active",
				"Normal DeletedRayCluster Deleted RayCluster ns/svc-old",
			},
		},
		"deleted, a cluster still terminating: waited for": {
			objs:           []client.Object{deleted().Obj(), clusterOf(t, rayService().Obj(), active).Terminating(t0).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &deleted().Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, Version: testOperatorVersion, Workers: []string{"small"}, Terminating: true}},
		},
		"deleted, nothing left: the finalizer goes, and the RayService with it": {
			objs: []client.Object{deleted().Obj()},
		},
		"deleted, nothing left, another finalizer: only ours goes": {
			objs:           []client.Object{deleted().Finalizer("user/keep").Obj()},
			wantStatus:     &deleted().Obj().Status,
			wantFinalizers: []string{"user/keep"},
		},
		"deleted without our finalizer: nothing to do": {
			objs: []client.Object{wrappers.MakeRayService(testName, testNS).Finalizer("user/keep").Deleted(t0).Obj(),
				clusterOf(t, rayService().Obj(), active).Obj()},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{"user/keep"},
			wantClusters:   []clusterState{{Name: active, Version: testOperatorVersion, Workers: []string{"small"}}},
		},
	})
}

// TestValidationFailure checks what an invalid RayService gets: a Warning
// with the reason of what is wrong, Ready False/ValidationFailed with the
// error that users can wait on, and no requeue; nothing is created.
func TestValidationFailure(t *testing.T) {
	badType := func() *wrappers.RayServiceWrapper { return rayService().UpgradeType("Bogus").Generation(2) }
	badTimeout := func() *wrappers.RayServiceWrapper {
		return rayService().Annotation(rayv1.AnnotationInitializingTimeout, "-5m").Generation(2)
	}
	const typeErr = "The RayService spec is invalid: Spec.UpgradeStrategy.Type value Bogus is invalid, valid options are NewClusterWithIncrementalUpgrade, NewCluster, or None"
	const timeoutErr = "annotation ray.io/initializing-timeout must be a positive duration, got: -5m"
	runPasses(t, map[string]passCase{
		"invalid spec": {
			objs: []client.Object{badType().Obj()},
			wantStatus: &badType().ObservedGeneration(2).LastUpdateTime(t0).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, typeErr, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantEvents:     []string{"Warning InvalidRayServiceSpec ns/svc: " + typeErr},
		},
		"invalid on first sight: the finalizer first, as KubeRay": {
			objs:           []client.Object{wrappers.MakeRayService(testName, testNS).UpgradeType("Bogus").Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"invalid metadata": {
			objs: []client.Object{badTimeout().Obj()},
			wantStatus: &badTimeout().ObservedGeneration(2).LastUpdateTime(t0).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, timeoutErr, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantEvents:     []string{"Warning InvalidRayServiceMetadata ns/svc: " + timeoutErr},
		},
		"fixed before it ever ran: it starts Initializing, with no stale error": {
			objs: []client.Object{rayService().Generation(3).ObservedGeneration(2).LastUpdateTime(t0.Add(-time.Hour)).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, typeErr, t0.Add(-time.Hour)).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &initializing(rayService().Generation(3), t0).PendingCluster(newCluster).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"fixed while it was serving: Ready again from its endpoints": {
			objs: idleWorld(t, serving(rayService()).Generation(3).ObservedGeneration(2).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, typeErr, t0.Add(-time.Hour)).Obj()),
			setup:          func(e *testEnv) { e.serveRunning(active) },
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     &serving(rayService().Generation(3)).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantServices:   idleServices(),
		},
		"a serving RayService made invalid keeps its clusters and Services": {
			objs: idleWorld(t, serving(rayService()).UpgradeType("Bogus").Generation(2).Obj()),
			wantStatus: &serving(rayService()).UpgradeType("Bogus").Generation(2).ObservedGeneration(2).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, typeErr, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantServices:   idleServices(),
			wantEvents:     []string{"Warning InvalidRayServiceSpec ns/svc: " + typeErr},
		},
	})
}

// TestValidate covers the checks of a RayService and the event reason of
// each (KubeRay's TestValidateRayServiceMetadata and
// TestValidateRayServiceSpec).
func TestValidate(t *testing.T) {
	named := func(name string) *wrappers.RayServiceWrapper { return wrappers.MakeRayService(name, testNS) }
	cases := map[string]struct {
		rs         *wrappers.RayServiceWrapper
		wantReason string // "" when valid
		wantErr    string // a substring of the error
	}{
		"valid":                       {rs: rayService()},
		"a name of 47 characters":     {rs: named(strings.Repeat("a", 47))},
		"a name of 48 characters":     {rs: named(strings.Repeat("a", 48)), wantReason: reasonInvalidMetadata, wantErr: "no more than 47 characters"},
		"a name not a DNS-1035 label": {rs: named("1svc"), wantReason: reasonInvalidMetadata, wantErr: "DNS1035"},
		"timeout as a Go duration":    {rs: rayService().Annotation(rayv1.AnnotationInitializingTimeout, "30m")},
		"timeout in seconds":          {rs: rayService().Annotation(rayv1.AnnotationInitializingTimeout, "1800")},
		"timeout zero": {rs: rayService().Annotation(rayv1.AnnotationInitializingTimeout, "0"), wantReason: reasonInvalidMetadata,
			wantErr: "must be a positive duration"},
		"timeout negative seconds": {rs: rayService().Annotation(rayv1.AnnotationInitializingTimeout, "-60"), wantReason: reasonInvalidMetadata,
			wantErr: "must be a positive integer"},
		"timeout unreadable": {rs: rayService().Annotation(rayv1.AnnotationInitializingTimeout, "soon"), wantReason: reasonInvalidMetadata,
			wantErr: "invalid format"},
		"an invalid cluster spec": {rs: rayService().ClusterSpec(&rayv1.RayClusterSpec{}), wantReason: reasonInvalidSpec,
			wantErr: "headGroupSpec should have at least one container"},
		"a named head Service": {
			rs: rayService().ClusterSpec(func() *rayv1.RayClusterSpec {
				spec := wrappers.MakeRayClusterSpec().Obj()
				spec.HeadGroupSpec.HeadService = wrappers.MakeService("mine", "").Obj()
				return spec
			}()),
			wantReason: reasonInvalidSpec, wantErr: "headService.metadata.name should not be set",
		},
		"Kubernetes token auth": {
			rs: rayService().ClusterSpec(func() *rayv1.RayClusterSpec {
				spec := wrappers.MakeRayClusterSpec().Obj()
				spec.AuthOptions = &rayv1.AuthOptions{EnableK8sTokenAuth: ptr.To(true)}
				return spec
			}()),
			wantReason: reasonInvalidSpec, wantErr: "K8s token auth mode is currently not supported for RayService",
		},
		"every known upgrade type": {rs: rayService().UpgradeType(rayv1.RayServiceUpgradeNone)},
		"an unknown upgrade type":  {rs: rayService().UpgradeType("Rolling"), wantReason: reasonInvalidSpec, wantErr: "Rolling is invalid"},
		"deletion delay 0":         {rs: rayService().DeletionDelaySeconds(0)},
		"a negative deletion delay": {rs: rayService().DeletionDelaySeconds(-1), wantReason: reasonInvalidSpec,
			wantErr: "should be a non-negative integer, got -1"},
		"serveConfigV2 not a YAML map": {rs: rayService().ServeConfig("- a\n- b\n"), wantReason: reasonInvalidSpec,
			wantErr: "serveConfigV2 is not a YAML map"},
		"an empty serveConfigV2": {rs: rayService().ServeConfig("")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := newEnv(t, nil).r.validate(tc.rs.Obj())
			var invalid *invalidspec.Error
			gotReason := ""
			if errors.As(err, &invalid) {
				gotReason = invalid.Reason
			}
			if gotReason != tc.wantReason || (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("validate = %v (reason %q), want %q (reason %q)", err, gotReason, tc.wantErr, tc.wantReason)
			}
		})
	}
}

// TestFinalizerConflict checks that losing a race to add the finalizer is
// not an error: the watch event of the change brings the next pass.
func TestFinalizerConflict(t *testing.T) {
	rs := wrappers.MakeRayService(testName, testNS).Obj()
	e := newEnv(t, []client.Object{rs})
	// A stale copy: the stored object moves on first.
	stored := e.rayService(t)
	stored.Labels = map[string]string{"moved": "on"}
	if err := e.client.Update(t.Context(), stored); err != nil {
		t.Fatal(err)
	}
	added, err := e.r.ensureFinalizer(t.Context(), rs)
	if added || ignoreConflict(err) != nil {
		t.Errorf("ensureFinalizer on a stale copy = %t, %v; want a conflict", added, err)
	}
	if diff := cmp.Diff([]string(nil), e.rayService(t).Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
}
