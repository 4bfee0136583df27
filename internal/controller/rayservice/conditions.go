package rayservice

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
)

// Condition messages, as KubeRay writes them.
const (
	msgInitializing      = "RayService is initializing"
	msgNonZeroEndpoints  = "Number of serve endpoints is greater than 0"
	msgZeroEndpoints     = "Number of serve endpoints dropped to 0"
	msgBothClusters      = "Both active and pending Ray clusters exist"
	msgNoPendingCluster  = "Active Ray cluster exists and no pending Ray cluster"
	msgNoActiveCluster   = "No active Ray cluster exists, and the RayService is not initializing. Please open a GitHub issue in the KubeRay repository."
	msgSuspendRequested  = "RayService suspension requested"
	msgSuspendInProgress = "RayService is being suspended"
	msgSuspendComplete   = "RayService is suspended"
	msgResumed           = "RayService is resumed"
	// msgServeRequestsSucceed is ServeRequestsFailing False (not KubeRay's).
	msgServeRequestsSucceed = "No request to Ray Serve is failing"
)

// initConditions sets Ready and UpgradeInProgress to Initializing when a
// RayService has no conditions yet.
func initConditions(rs *rayv1.RayService, now metav1.Time) {
	at := conditions.At(now, rs.Generation)
	clearValidationFailure(rs, now)
	if len(rs.Status.Conditions) > 0 {
		return
	}
	conditions.MarkFalse(&rs.Status.Conditions, rayv1.RayServiceReady, rayv1.RayServiceInitializing, msgInitializing, at)
	conditions.MarkFalse(&rs.Status.Conditions, rayv1.UpgradeInProgress, rayv1.RayServiceInitializing, msgInitializing, at)
}

// clearValidationFailure replaces Ready False/ValidationFailed, left by an
// earlier pass, once the spec is valid again: otherwise nothing else moves
// it until a serve endpoint appears, so it kept the old error, the
// initializing timeout never started, and UpgradeInProgress went Unknown. A
// RayService that never had a cluster starts Initializing afresh (the
// timeout counts from now); one that had keeps Ready False until its
// endpoints say otherwise.
func clearValidationFailure(rs *rayv1.RayService, now metav1.Time) {
	at := conditions.At(now, rs.Generation)
	if !conditions.Has(rs.Status.Conditions, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed) {
		return
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != "" {
		conditions.MarkFalse(&rs.Status.Conditions, rayv1.RayServiceReady, rayv1.ZeroServeEndpoints, msgZeroEndpoints, at)
		return
	}
	for _, t := range []rayv1.RayServiceConditionType{rayv1.RayServiceReady, rayv1.UpgradeInProgress} {
		conditions.Remove(&rs.Status.Conditions, t)
		conditions.MarkFalse(&rs.Status.Conditions, t, rayv1.RayServiceInitializing, msgInitializing, at)
	}
}

// setReady follows the serve endpoints: True while there is one, False
// (ZeroServeEndpoints) when they drop to none after being ready; before
// that Ready stays as it is (Initializing, or timed out).
func setReady(rs *rayv1.RayService, now metav1.Time) {
	at := conditions.At(now, rs.Generation)
	switch {
	case rs.Status.NumServeEndpoints > 0:
		conditions.MarkTrue(&rs.Status.Conditions, rayv1.RayServiceReady, rayv1.NonZeroServeEndpoints, msgNonZeroEndpoints, at)
	case conditions.IsTrue(rs.Status.Conditions, rayv1.RayServiceReady):
		conditions.MarkFalse(&rs.Status.Conditions, rayv1.RayServiceReady, rayv1.ZeroServeEndpoints, msgZeroEndpoints, at)
	}
}

// setUpgradeInProgress follows which clusters exist in status.
func setUpgradeInProgress(rs *rayv1.RayService, now metav1.Time) {
	at := conditions.At(now, rs.Generation)
	active, pending := rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName
	switch {
	case active != "" && pending != "":
		conditions.MarkTrue(&rs.Status.Conditions, rayv1.UpgradeInProgress, rayv1.BothActivePendingClustersExist, msgBothClusters, at)
	case active != "":
		conditions.MarkFalse(&rs.Status.Conditions, rayv1.UpgradeInProgress, rayv1.NoPendingCluster, msgNoPendingCluster, at)
	default:
		c := conditions.Get(rs.Status.Conditions, rayv1.UpgradeInProgress)
		if c != nil && (c.Reason == string(rayv1.RayServiceInitializing) || c.Reason == string(rayv1.RayServiceInitializingTimeout)) {
			return
		}
		conditions.MarkUnknown(&rs.Status.Conditions, rayv1.UpgradeInProgress, rayv1.NoActiveCluster, msgNoActiveCluster, at)
	}
}

// serviceStatus is the legacy summary of Ready.
func serviceStatus(rs *rayv1.RayService) rayv1.ServiceStatus {
	if conditions.IsTrue(rs.Status.Conditions, rayv1.RayServiceReady) {
		return rayv1.Running
	}
	return rayv1.NotRunning
}
