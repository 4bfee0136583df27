package rayjob

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
)

// deleteCluster deletes the RayJob's RayCluster. It reports true once the
// cluster is gone, so callers can wait for the Pods to be released. A
// selected cluster (clusterSelector) is never deleted: it is not the
// RayJob's.
func (r *Reconciler) deleteCluster(ctx context.Context, job *rayv1.RayJob) (bool, error) {
	if job.Spec.UsesClusterSelector() || job.Status.RayClusterName == "" {
		return true, nil
	}
	return r.clusters.Delete(ctx, job, clusterKey(job))
}

// suspendWorkerGroups sets suspend on every worker group of the RayJob's
// cluster, which makes the RayCluster controller delete the workers and
// keep the head (DeleteWorkers).
func (r *Reconciler) suspendWorkerGroups(ctx context.Context, job *rayv1.RayJob) error {
	if job.Spec.UsesClusterSelector() {
		return nil
	}
	cluster := &rayv1.RayCluster{}
	if err := r.Client.Get(ctx, clusterKey(job), cluster); err != nil {
		return client.IgnoreNotFound(err)
	}
	if allWorkerGroupsSuspended(cluster) {
		return nil
	}
	for i := range cluster.Spec.WorkerGroupSpecs {
		cluster.Spec.WorkerGroupSpecs[i].Suspend = ptr.To(true)
	}
	return r.Children().Update(ctx, job, cluster, childwrite.Event{
		Reason: reasonSuspendedWorkerGroups, Note: "Set the `suspend` field to true for all worker groups in cluster " + clusterKey(job).String(),
		FailedReason: reasonFailedToSuspendWorkerGroup, FailedNote: "Failed to suspend worker groups in cluster " + clusterKey(job).String(),
	})
}

// allWorkerGroupsSuspended reports whether every worker group is suspended.
func allWorkerGroupsSuspended(cluster *rayv1.RayCluster) bool {
	for _, group := range cluster.Spec.WorkerGroupSpecs {
		if !ptr.Deref(group.Suspend, false) {
			return false
		}
	}
	return true
}

// deleteSelf deletes the RayJob; the garbage collector deletes what it owns.
func (r *Reconciler) deleteSelf(ctx context.Context, job *rayv1.RayJob) error {
	return r.Children().Delete(ctx, job, job, childwrite.Event{
		Reason: reasonDeletedRayJob, Note: childwrite.Noun("Deleted RayJob", job),
		FailedReason: reasonFailedToDeleteRayJob, FailedNote: "Failed to delete RayJob",
	}, childwrite.NotFoundAsDeleted())
}

// executeDeletionPolicy takes the action of policy. Every action is
// idempotent: repeating it after it took effect changes nothing.
func (r *Reconciler) executeDeletionPolicy(ctx context.Context, job *rayv1.RayJob, policy rayv1.DeletionPolicyType) error {
	ctrl.LoggerFrom(ctx).Info("Executing deletion policy", "policy", policy)
	switch policy {
	case rayv1.DeleteCluster:
		_, err := r.deleteCluster(ctx, job)
		return err
	case rayv1.DeleteWorkers:
		return r.suspendWorkerGroups(ctx, job)
	case rayv1.DeleteSelf:
		return r.deleteSelf(ctx, job)
	case rayv1.DeleteNone:
		return nil
	default:
		return fmt.Errorf("unknown deletion policy %q", policy)
	}
}

// isDeletionActionCompleted observes whether policy's effect is already
// there, so that a rule is not executed again: workers suspended (or the
// whole cluster gone), cluster gone or going. DeleteSelf cannot be complete
// while the RayJob is still read; DeleteNone always is.
func (r *Reconciler) isDeletionActionCompleted(ctx context.Context, job *rayv1.RayJob, policy rayv1.DeletionPolicyType) (bool, error) {
	switch policy {
	case rayv1.DeleteNone:
		return true, nil
	case rayv1.DeleteSelf:
		return false, nil
	case rayv1.DeleteCluster, rayv1.DeleteWorkers:
		cluster := &rayv1.RayCluster{}
		if err := r.Client.Get(ctx, clusterKey(job), cluster); err != nil {
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		}
		if !cluster.DeletionTimestamp.IsZero() {
			return true, nil
		}
		return policy == rayv1.DeleteWorkers && allWorkerGroupsSuspended(cluster), nil
	default:
		return false, fmt.Errorf("unknown deletion policy %q", policy)
	}
}
