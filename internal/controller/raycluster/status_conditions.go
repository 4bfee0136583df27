package raycluster

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// setCondition sets a condition, stamping the transition time from the
// injected clock when its status changes.
func setCondition(status *rayv1.RayClusterStatus, t rayv1.RayClusterConditionType, s metav1.ConditionStatus, reason, msg string, now metav1.Time) {
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: string(t), Status: s, Reason: reason, Message: msg, LastTransitionTime: now,
	})
}

// setReplicaFailure: a Pod creation or deletion failure sets ReplicaFailure;
// a clean pass clears it; other errors leave it alone. The message is the
// step's own error, as KubeRay's, without the name of the step that failed.
func setReplicaFailure(status *rayv1.RayClusterStatus, reconcileErr error, now metav1.Time) {
	if reconcileErr == nil {
		meta.RemoveStatusCondition(&status.Conditions, string(rayv1.RayClusterReplicaFailure))
		return
	}
	if reason := replicaFailureReason(reconcileErr); reason != "" {
		setCondition(status, rayv1.RayClusterReplicaFailure, metav1.ConditionTrue, reason, passsteps.Cause(reconcileErr).Error(), now)
	}
}

// setHeadPodReady mirrors the head Pod's Ready condition.
func setHeadPodReady(status *rayv1.RayClusterStatus, head *corev1.Pod, now metav1.Time) {
	if head == nil {
		setCondition(status, rayv1.HeadPodReady, metav1.ConditionFalse, rayv1.HeadPodNotFound, "Head Pod not found", now)
		return
	}
	cond := metav1.Condition{Status: metav1.ConditionFalse, Reason: rayv1.UnknownReason}
	for _, c := range head.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		cond.Status, cond.Message = metav1.ConditionStatus(c.Status), c.Message
		switch {
		case c.Reason != "":
			cond.Reason = c.Reason
		case c.Status == corev1.ConditionTrue:
			cond.Reason = rayv1.HeadPodRunningAndReady
		}
		break
	}
	setCondition(status, rayv1.HeadPodReady, cond.Status, cond.Reason, cond.Message, now)
}

// setProvisioned: RayClusterProvisioned turns true the first time every
// Pod runs, and then stays true (suspension aside, see
// setSuspendConditions): it answers "has this cluster ever come up", which
// a flapping Pod must not change.
func setProvisioned(status *rayv1.RayClusterStatus, pods []corev1.Pod, now metav1.Time) {
	if meta.IsStatusConditionTrue(status.Conditions, string(rayv1.RayClusterProvisioned)) ||
		meta.IsStatusConditionTrue(status.Conditions, string(rayv1.RayClusterSuspended)) {
		return
	}
	if allPodsRunning(pods) {
		setCondition(status, rayv1.RayClusterProvisioned, metav1.ConditionTrue, rayv1.AllPodRunningAndReadyFirstTime,
			"All Ray Pods are ready for the first time", now)
		return
	}
	setCondition(status, rayv1.RayClusterProvisioned, metav1.ConditionFalse, rayv1.RayClusterPodsProvisioning,
		"RayCluster Pods are being provisioned for first time", now)
}

// setSuspendConditions advances suspension (see suspend.go): not suspended
// and asked to -> Suspending; Suspending with no Pod left -> Suspended (and
// Provisioned false, so that resuming provisions anew); Suspended and asked
// to resume -> not suspended.
func setSuspendConditions(status *rayv1.RayClusterStatus, cluster *rayv1.RayCluster, pods int, now metav1.Time) {
	suspending, suspended := string(rayv1.RayClusterSuspending), string(rayv1.RayClusterSuspended)
	switch suspendState(cluster) {
	case rayv1.RayClusterSuspending:
		if pods > 0 {
			return
		}
		setCondition(status, rayv1.RayClusterProvisioned, metav1.ConditionFalse, rayv1.RayClusterPodsProvisioning, "RayCluster has been suspended", now)
		setCondition(status, rayv1.RayClusterSuspending, metav1.ConditionFalse, suspending, "", now)
		setCondition(status, rayv1.RayClusterSuspended, metav1.ConditionTrue, suspended, "", now)
	case rayv1.RayClusterSuspended:
		if !specSuspended(cluster) { // KubeRay needs an explicit false; removing the field resumes too
			setCondition(status, rayv1.RayClusterSuspended, metav1.ConditionFalse, suspended, "", now)
		}
	default:
		setCondition(status, rayv1.RayClusterSuspended, metav1.ConditionFalse, suspended, "", now)
		if specSuspended(cluster) {
			setCondition(status, rayv1.RayClusterSuspending, metav1.ConditionTrue, suspending, "", now)
		} else {
			setCondition(status, rayv1.RayClusterSuspending, metav1.ConditionFalse, suspending, "", now)
		}
	}
}
