package rayservice

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
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

// setCondition sets a condition of rs at time now, stamping the generation.
// Its transition time moves only when its status changes.
func setCondition(rs *rayv1.RayService, t rayv1.RayServiceConditionType, status metav1.ConditionStatus,
	reason rayv1.RayServiceConditionReason, message string, now metav1.Time) {
	meta.SetStatusCondition(&rs.Status.Conditions, metav1.Condition{
		Type: string(t), Status: status, Reason: string(reason), Message: message,
		ObservedGeneration: rs.Generation, LastTransitionTime: now,
	})
}

// condition returns a condition of rs, or nil.
func condition(rs *rayv1.RayService, t rayv1.RayServiceConditionType) *metav1.Condition {
	return meta.FindStatusCondition(rs.Status.Conditions, string(t))
}

// isTrue reports whether a condition is True in conds.
func isTrue(conds []metav1.Condition, t rayv1.RayServiceConditionType) bool {
	return meta.IsStatusConditionTrue(conds, string(t))
}

// hasReason reports whether a condition has status and reason.
func hasReason(rs *rayv1.RayService, t rayv1.RayServiceConditionType, status metav1.ConditionStatus, reason rayv1.RayServiceConditionReason) bool {
	c := condition(rs, t)
	return c != nil && c.Status == status && c.Reason == string(reason)
}

// initConditions sets Ready and UpgradeInProgress to Initializing when a
// RayService has no conditions yet.
func initConditions(rs *rayv1.RayService, now metav1.Time) {
	clearValidationFailure(rs, now)
	if len(rs.Status.Conditions) > 0 {
		return
	}
	setCondition(rs, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, now)
	setCondition(rs, rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, now)
}

// clearValidationFailure replaces Ready False/ValidationFailed, left by an
// earlier pass, once the spec is valid again: otherwise nothing else moves
// it until a serve endpoint appears, so it kept the old error, the
// initializing timeout never started, and UpgradeInProgress went Unknown. A
// RayService that never had a cluster starts Initializing afresh (the
// timeout counts from now); one that had keeps Ready False until its
// endpoints say otherwise.
func clearValidationFailure(rs *rayv1.RayService, now metav1.Time) {
	if !hasReason(rs, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed) {
		return
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != "" {
		setCondition(rs, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, msgZeroEndpoints, now)
		return
	}
	for _, t := range []rayv1.RayServiceConditionType{rayv1.RayServiceReady, rayv1.UpgradeInProgress} {
		meta.RemoveStatusCondition(&rs.Status.Conditions, string(t))
		setCondition(rs, t, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, now)
	}
}

// setReady follows the serve endpoints: True while there is one, False
// (ZeroServeEndpoints) when they drop to none after being ready; before
// that Ready stays as it is (Initializing, or timed out).
func setReady(rs *rayv1.RayService, now metav1.Time) {
	switch {
	case rs.Status.NumServeEndpoints > 0:
		setCondition(rs, rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints, msgNonZeroEndpoints, now)
	case isTrue(rs.Status.Conditions, rayv1.RayServiceReady):
		setCondition(rs, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, msgZeroEndpoints, now)
	}
}

// setUpgradeInProgress follows which clusters exist in status.
func setUpgradeInProgress(rs *rayv1.RayService, now metav1.Time) {
	active, pending := rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName
	switch {
	case active != "" && pending != "":
		setCondition(rs, rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, now)
	case active != "":
		setCondition(rs, rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, now)
	default:
		c := condition(rs, rayv1.UpgradeInProgress)
		if c != nil && (c.Reason == string(rayv1.RayServiceInitializing) || c.Reason == string(rayv1.RayServiceInitializingTimeout)) {
			return
		}
		setCondition(rs, rayv1.UpgradeInProgress, metav1.ConditionUnknown, rayv1.NoActiveCluster, msgNoActiveCluster, now)
	}
}

// serviceStatus is the legacy summary of Ready.
func serviceStatus(rs *rayv1.RayService) rayv1.ServiceStatus {
	if isTrue(rs.Status.Conditions, rayv1.RayServiceReady) {
		return rayv1.Running
	}
	return rayv1.NotRunning
}
