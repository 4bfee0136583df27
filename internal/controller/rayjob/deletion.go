package rayjob

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// ttlBuffer is added to every TTL requeue so that the next pass surely
// finds the TTL expired despite clock granularity and queue delays.
const ttlBuffer = 2 * time.Second

// reconcileFinished serves Complete and Failed: it only cleans up, in the
// first mechanism that applies:
//
//  1. a clusterSelector cluster is never touched;
//  2. with the RayJobDeletionPolicy gate on and spec.deletionStrategy set,
//     its deletionRules, else its legacy onSuccess/onFailure policies;
//  3. spec.shutdownAfterJobFinishes;
//  4. otherwise nothing.
func (r *Reconciler) reconcileFinished(ctx context.Context, s *scope) (passsteps.Result, error) {
	// On every pass, before the deletion policies, as KubeRay: the plugin
	// follows what the cluster still runs (all of it, suspended workers,
	// nothing once deleted). A failure is reported and does not hold the
	// deletion policies up; the RayJob is looked at again to retry it.
	cleanupErr := r.cleanupBatchScheduler(ctx, s.job)
	if cleanupErr != nil {
		ctrl.LoggerFrom(ctx).Error(cleanupErr, "Batch scheduler cleanup failed")
	}
	result, err := r.applyDeletionPolicies(ctx, s.job)
	if cleanupErr != nil && err == nil && result.RequeueAfter == 0 {
		result.RequeueAfter = defaultRequeue
	}
	return result, err
}

// applyDeletionPolicies runs the deletion policy that applies to a finished
// RayJob (see reconcileFinished).
func (r *Reconciler) applyDeletionPolicies(ctx context.Context, job *rayv1.RayJob) (passsteps.Result, error) {
	switch {
	case job.Spec.UsesClusterSelector():
		return passsteps.Result{}, nil
	case r.deletionPolicyEnabled() && job.Spec.DeletionStrategy != nil:
		if job.Spec.DeletionStrategy.DeletionRules != nil {
			return r.handleDeletionRules(ctx, job)
		}
		return r.handleLegacyDeletionPolicy(ctx, job)
	case job.Spec.ShutdownAfterJobFinishes:
		return r.handleShutdownAfterJobFinishes(ctx, job)
	default:
		return passsteps.Result{}, nil
	}
}

// ttlExpiry is EndTime plus ttlSeconds: when a TTL counted from the end of
// the RayJob expires. A missing EndTime counts as now.
func (r *Reconciler) ttlExpiry(job *rayv1.RayJob, ttlSeconds int32) time.Time {
	end := r.now()
	if job.Status.EndTime != nil {
		end = job.Status.EndTime.Time
	}
	return end.Add(time.Duration(ttlSeconds) * time.Second)
}

// requeueDelayFor is how long to wait for t, plus ttlBuffer.
func (r *Reconciler) requeueDelayFor(t time.Time) time.Duration {
	return t.Sub(r.now()) + ttlBuffer
}

// handleShutdownAfterJobFinishes is the oldest mechanism: once
// ttlSecondsAfterFinished passed, delete the RayCluster (keeping the
// finished submitter Job for its logs), or the RayJob itself when
// DELETE_RAYJOB_CR_AFTER_JOB_FINISHES is set.
func (r *Reconciler) handleShutdownAfterJobFinishes(ctx context.Context, job *rayv1.RayJob) (passsteps.Result, error) {
	expiry := r.ttlExpiry(job, job.Spec.TTLSecondsAfterFinished)
	if expiry.After(r.now()) {
		return passsteps.Result{RequeueAfter: r.requeueDelayFor(expiry)}, nil
	}
	policy := rayv1.DeleteCluster
	if r.opts.DeleteRayJobAfterJobFinishes {
		policy = rayv1.DeleteSelf
	}
	if err := r.executeDeletionPolicy(ctx, job, policy); err != nil {
		return passsteps.Result{}, err
	}
	return passsteps.Result{}, nil
}

// handleLegacyDeletionPolicy applies onSuccess or onFailure (by the Ray job's
// status) once ttlSecondsAfterFinished passed. A RayJob that ended with
// neither SUCCEEDED nor FAILED (say STOPPED, or a deadline) matches neither.
func (r *Reconciler) handleLegacyDeletionPolicy(ctx context.Context, job *rayv1.RayJob) (passsteps.Result, error) {
	var chosen *rayv1.DeletionPolicy
	switch job.Status.JobStatus {
	case rayv1.JobStatusSucceeded:
		chosen = job.Spec.DeletionStrategy.OnSuccess
	case rayv1.JobStatusFailed:
		chosen = job.Spec.DeletionStrategy.OnFailure
	}
	if chosen == nil || chosen.Policy == nil || *chosen.Policy == rayv1.DeleteNone {
		return passsteps.Result{}, nil
	}
	expiry := r.ttlExpiry(job, job.Spec.TTLSecondsAfterFinished)
	if expiry.After(r.now()) {
		return passsteps.Result{RequeueAfter: r.requeueDelayFor(expiry)}, nil
	}
	if err := r.executeDeletionPolicy(ctx, job, *chosen.Policy); err != nil {
		return passsteps.Result{}, err
	}
	return passsteps.Result{}, nil
}
