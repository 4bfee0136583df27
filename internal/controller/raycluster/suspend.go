package raycluster

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/features"
)

// Suspension is atomic: spec.suspend first makes the status say
// RayClusterSuspending (status.go); while it does, every Pod is deleted and
// nothing is created; once no Pod is left the status says
// RayClusterSuspended. Resuming clears RayClusterSuspended before Pods are
// created again. So a cluster is never half suspended, even when suspend is
// flipped back during the deletion.

// suspendState is the suspension condition that is true, or "".
func suspendState(cluster *rayv1.RayCluster) rayv1.RayClusterConditionType {
	for _, t := range []rayv1.RayClusterConditionType{rayv1.RayClusterSuspending, rayv1.RayClusterSuspended} {
		if conditions.IsTrue(cluster.Status.Conditions, t) {
			return t
		}
	}
	return ""
}

func specSuspended(cluster *rayv1.RayCluster) bool {
	return cluster.Spec.Suspend != nil && *cluster.Spec.Suspend
}

// reconcileSuspension deletes every Pod while the cluster suspends, and
// reports whether the Pod reconciliation must stop there: also while the
// cluster is suspended, or asked to suspend but not yet marked Suspending.
// Without the RayClusterStatusConditions gate, spec.suspend alone decides.
func (r *Reconciler) reconcileSuspension(ctx context.Context, s *scope) (bool, error) {
	gated := r.opts.Features.Enabled(features.RayClusterStatusConditions)
	state := suspendState(s.cluster)
	if state == rayv1.RayClusterSuspending || (!gated && specSuspended(s.cluster)) {
		return true, r.deleteAllPodsFor(ctx, s, "suspension")
	}
	return gated && (state == rayv1.RayClusterSuspended || specSuspended(s.cluster)), nil
}

// deleteAllPodsFor deletes every Pod of the cluster in one call (suspension,
// Recreate upgrade), saying why in the events.
func (r *Reconciler) deleteAllPodsFor(ctx context.Context, s *scope, why string) error {
	deleted, err := r.deleteSnapshotPods(ctx, s, nil)
	if err != nil {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonFailedToDeletePodCollection, actionDelete,
			"Failed deleting Pods due to %s for RayCluster %s/%s, %v", why, s.cluster.Namespace, s.cluster.Name, err)
		return errors.Join(errFailedDeleteAllPods, err)
	}
	if deleted {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, reasonDeletedPod, actionDelete,
			"Deleted Pods for RayCluster %s/%s due to %s", s.cluster.Namespace, s.cluster.Name, why)
	}
	return nil
}

// suspendWorkerGroup deletes every Pod of a suspended worker group (RayJob's
// DeleteWorkers policy).
func (r *Reconciler) suspendWorkerGroup(ctx context.Context, s *scope, group string) error {
	deleted, err := r.deleteSnapshotPods(ctx, s, groupPodLabels(group))
	if err != nil {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonFailedToDeleteWorkerPodColl, actionDelete,
			"Failed deleting worker Pods for suspended group %s in RayCluster %s/%s, %v", group, s.cluster.Namespace, s.cluster.Name, err)
		return errors.Join(errFailedDeleteWorkerPod, err)
	}
	if deleted {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, reasonDeletedWorkerPod, actionDelete,
			"Deleted all pods for suspended worker group %s in RayCluster %s/%s", group, s.cluster.Namespace, s.cluster.Name)
	}
	return nil
}
