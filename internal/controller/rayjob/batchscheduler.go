package rayjob

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
)

// submitToBatchScheduler lets the batch scheduler plugin prepare for the
// RayJob on every Initializing pass (Volcano creates or resizes the RayJob's
// PodGroup, which also covers its cluster and submitter). It reports
// whether the pass may go on. A refusal (a RayJob the plugin cannot
// schedule: a clusterSelector with Volcano, K8sJobMode with KAI-Scheduler,
// any RayJob with scheduler-plugins) keeps the RayJob Initializing, as in
// KubeRay, with the reason in status.message and a Warning event the first
// time; it is looked at again at the usual poll interval, so that deadlines
// and a corrected spec still act. Other errors are returned and retried.
func (r *Reconciler) submitToBatchScheduler(ctx context.Context, job *rayv1.RayJob) (bool, error) {
	if r.opts.BatchScheduler == nil {
		return true, nil
	}
	err := batchscheduler.Submit(ctx, r.opts.BatchScheduler, job)
	var rejected *batchscheduler.RejectedError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &rejected):
		msg := fmt.Sprintf("batch scheduler %s: %v", rejected.Scheduler, err)
		if job.Status.Message != msg {
			r.events.Eventf(job, nil, corev1.EventTypeWarning, reasonFailedBatchScheduling, actionCreate, "%s", msg)
			job.Status.Message = msg
		}
		ctrl.LoggerFrom(ctx).Info("The batch scheduler refuses the RayJob", "reason", err.Error())
		return false, nil
	default:
		r.events.Eventf(job, nil, corev1.EventTypeWarning, reasonFailedBatchScheduling, actionCreate,
			"Batch scheduler %s failed for RayJob %s/%s: %v", r.opts.BatchScheduler.Name(), job.Namespace, job.Name, err)
		return false, err
	}
}

// cleanupBatchScheduler lets the plugin release what it reserves for the
// RayJob (Volcano shrinks the PodGroup to what the cluster still runs),
// with a BatchSchedulerCleanedUp event when it changed something and a
// FailedToCleanupBatchScheduler event when it failed. It must run before
// status.rayClusterName is cleared: that is how the plugin finds the
// cluster.
func (r *Reconciler) cleanupBatchScheduler(ctx context.Context, job *rayv1.RayJob) error {
	if r.opts.BatchScheduler == nil {
		return nil
	}
	cleaned, err := batchscheduler.Cleanup(ctx, r.opts.BatchScheduler, job)
	if err != nil {
		r.events.Eventf(job, nil, corev1.EventTypeWarning, reasonFailedToCleanupBatchScheduler, actionDelete,
			"Failed to clean up batch scheduler %s resources of RayJob %s/%s: %v", r.opts.BatchScheduler.Name(), job.Namespace, job.Name, err)
		return fmt.Errorf("cleaning up batch scheduler resources: %w", err)
	}
	if cleaned {
		r.events.Eventf(job, nil, corev1.EventTypeNormal, reasonBatchSchedulerCleanedUp, actionDelete,
			"Cleaned up batch scheduler %s resources of RayJob %s/%s", r.opts.BatchScheduler.Name(), job.Namespace, job.Name)
	}
	return nil
}
