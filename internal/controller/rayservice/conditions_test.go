package rayservice

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestCalculateConditions covers the condition setters of a pass (KubeRay's
// TestCalculateConditions): initial conditions, Ready from the serve
// endpoints, UpgradeInProgress from the clusters in status, serviceStatus
// from Ready, and transition times that move only with the status.
func TestCalculateConditions(t *testing.T) {
	earlier := t0.Add(-time.Hour)
	now := metav1.Time{Time: t0}
	// calculate runs the setters in the order calculateStatus does.
	calculate := func(rs *rayv1.RayService) {
		initConditions(rs, now)
		setReady(rs, now)
		setUpgradeInProgress(rs, now)
		rs.Status.ServiceStatus = serviceStatus(rs)
	}
	cases := map[string]struct {
		rs   *wrappers.RayServiceWrapper
		want *wrappers.RayServiceWrapper
	}{
		"no conditions: both Initializing": {
			rs:   rayService(),
			want: rayService().Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, t0).Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, t0),
		},
		"no conditions but endpoints and an active cluster: Ready at once": {
			rs: rayService().ActiveCluster(active).NumServeEndpoints(2),
			want: rayService().ActiveCluster(active).NumServeEndpoints(2).ServiceStatus(rayv1.Running).
				Condition(rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints, msgNonZeroEndpoints, t0).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, t0),
		},
		"Initializing with a pending cluster only stays Initializing": {
			rs:   initializing(rayService(), earlier).PendingCluster(newCluster),
			want: initializing(rayService(), earlier).PendingCluster(newCluster),
		},
		"Initializing to Ready once an endpoint serves": {
			rs: initializing(rayService(), earlier).ActiveCluster(active).NumServeEndpoints(1),
			want: initializing(rayService(), earlier).ActiveCluster(active).NumServeEndpoints(1).ServiceStatus(rayv1.Running).
				Condition(rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints, msgNonZeroEndpoints, t0).
				// False to False: the reason changes, the transition time stays.
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, earlier),
		},
		"Initializing with an active cluster but no endpoint: Ready stays Initializing": {
			rs: initializing(rayService(), earlier).ActiveCluster(active),
			want: initializing(rayService(), earlier).ActiveCluster(active).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, earlier),
		},
		"Ready stays Ready, its transition time kept": {
			rs:   readyAt(earlier).NumServeEndpoints(3),
			want: readyAt(earlier).NumServeEndpoints(3),
		},
		"Ready to ZeroServeEndpoints when the endpoints drop to none": {
			rs: readyAt(earlier).NumServeEndpoints(0),
			want: readyAt(earlier).NumServeEndpoints(0).ServiceStatus(rayv1.NotRunning).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, msgZeroEndpoints, t0),
		},
		"ZeroServeEndpoints back to Ready": {
			rs: readyAt(earlier).NumServeEndpoints(1).ServiceStatus(rayv1.NotRunning).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, msgZeroEndpoints, earlier),
			want: readyAt(earlier).NumServeEndpoints(1).
				Condition(rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints, msgNonZeroEndpoints, t0),
		},
		"both clusters: UpgradeInProgress True": {
			rs: readyAt(earlier).PendingCluster(pending),
			want: readyAt(earlier).PendingCluster(pending).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0),
		},
		"no cluster after Ready: UpgradeInProgress Unknown": {
			rs: readyAt(earlier).ActiveCluster(""),
			want: readyAt(earlier).ActiveCluster("").
				Condition(rayv1.UpgradeInProgress, metav1.ConditionUnknown, rayv1.NoActiveCluster, msgNoActiveCluster, t0),
		},
		"InitializingTimeout is kept, UpgradeInProgress too": {
			rs:   timedOut(earlier),
			want: timedOut(earlier),
		},
		"valid again after ValidationFailed, never had a cluster: Initializing from now": {
			rs: rayService().PendingCluster(newCluster).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, "invalid", earlier),
			want: initializing(rayService(), t0).ObservedGeneration(0).PendingCluster(newCluster),
		},
		"valid again after ValidationFailed, an active cluster without endpoints: ZeroServeEndpoints": {
			rs: readyAt(earlier).NumServeEndpoints(0).ServiceStatus(rayv1.NotRunning).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, "invalid", earlier),
			want: readyAt(earlier).NumServeEndpoints(0).ServiceStatus(rayv1.NotRunning).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, msgZeroEndpoints, earlier),
		},
		"valid again after ValidationFailed, an active cluster with endpoints: Ready": {
			rs: readyAt(earlier).ServiceStatus(rayv1.NotRunning).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed, "invalid", earlier),
			want: readyAt(earlier).Condition(rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints, msgNonZeroEndpoints, t0),
		},
		"UpgradeInProgress with reason InitializingTimeout (as KubeRay may leave it) is kept": {
			rs: timedOut(earlier).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout, "timed out", earlier),
			want: timedOut(earlier).
				Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout, "timed out", earlier),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := tc.rs.Obj()
			calculate(rs)
			if diff := cmp.Diff(tc.want.Obj().Status, rs.Status, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// readyAt is a Ready RayService with an active cluster whose conditions
// last moved at at.
func readyAt(at time.Time) *wrappers.RayServiceWrapper {
	return rayService().ActiveCluster(active).NumServeEndpoints(1).ServiceStatus(rayv1.Running).
		Condition(rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints, msgNonZeroEndpoints, at).
		Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, at)
}

// timedOut is a RayService that timed out initializing at at.
func timedOut(at time.Time) *wrappers.RayServiceWrapper {
	return rayService().Annotation(rayv1.AnnotationInitializingTimeout, "10m").
		Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout, "timed out", at).
		Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, at)
}
