package raycluster

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// setReplicaFailure: a Pod creation or deletion failure sets ReplicaFailure;
// a clean pass clears it; other errors leave it alone. The message is the
// step's own error, as KubeRay's, without the name of the step that failed.
func setReplicaFailure(status *rayv1.RayClusterStatus, reconcileErr error, now metav1.Time) {
	if reconcileErr == nil {
		conditions.Remove(&status.Conditions, rayv1.RayClusterReplicaFailure)
		return
	}
	if reason := replicaFailureReason(reconcileErr); reason != "" {
		conditions.MarkTrue(&status.Conditions, rayv1.RayClusterReplicaFailure, reason, passsteps.Cause(reconcileErr).Error(), conditions.Stamp{Now: now})
	}
}

// setHeadPodReady mirrors the head Pod's Ready condition.
func setHeadPodReady(status *rayv1.RayClusterStatus, head *corev1.Pod, now metav1.Time) {
	if head == nil {
		conditions.MarkFalse(&status.Conditions, rayv1.HeadPodReady, rayv1.HeadPodNotFound, "Head Pod not found", conditions.Stamp{Now: now})
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
	conditions.Set(&status.Conditions, rayv1.HeadPodReady, cond.Status, cond.Reason, cond.Message, conditions.Stamp{Now: now})
}

// setProvisioned: RayClusterProvisioned turns true the first time every
// Pod runs, and then stays true (suspension aside, see
// setSuspendConditions): it answers "has this cluster ever come up", which
// a flapping Pod must not change.
func setProvisioned(status *rayv1.RayClusterStatus, pods []corev1.Pod, now metav1.Time) {
	if conditions.IsTrue(status.Conditions, rayv1.RayClusterProvisioned) ||
		conditions.IsTrue(status.Conditions, rayv1.RayClusterSuspended) {
		return
	}
	if allPodsRunning(pods) {
		conditions.MarkTrue(&status.Conditions, rayv1.RayClusterProvisioned, rayv1.AllPodRunningAndReadyFirstTime, "All Ray Pods are ready for the first time", conditions.Stamp{Now: now})
		return
	}
	conditions.MarkFalse(&status.Conditions, rayv1.RayClusterProvisioned, rayv1.RayClusterPodsProvisioning, "RayCluster Pods are being provisioned for first time", conditions.Stamp{Now: now})
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
		conditions.MarkFalse(&status.Conditions, rayv1.RayClusterProvisioned, rayv1.RayClusterPodsProvisioning, "RayCluster has been suspended", conditions.Stamp{Now: now})
		conditions.MarkFalse(&status.Conditions, rayv1.RayClusterSuspending, suspending, "", conditions.Stamp{Now: now})
		conditions.MarkTrue(&status.Conditions, rayv1.RayClusterSuspended, suspended, "", conditions.Stamp{Now: now})
	case rayv1.RayClusterSuspended:
		if !specSuspended(cluster) { // KubeRay needs an explicit false; removing the field resumes too
			conditions.MarkFalse(&status.Conditions, rayv1.RayClusterSuspended, suspended, "", conditions.Stamp{Now: now})
		}
	default:
		conditions.MarkFalse(&status.Conditions, rayv1.RayClusterSuspended, suspended, "", conditions.Stamp{Now: now})
		if specSuspended(cluster) {
			conditions.MarkTrue(&status.Conditions, rayv1.RayClusterSuspending, suspending, "", conditions.Stamp{Now: now})
		} else {
			conditions.MarkFalse(&status.Conditions, rayv1.RayClusterSuspending, suspending, "", conditions.Stamp{Now: now})
		}
	}
}
