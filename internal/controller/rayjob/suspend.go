package rayjob

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// podsGoneRequeue is how soon a BlockingRecreate RayJob looks again for
// the previous attempt's Pods (the RayJob controller does not watch Pods).
const podsGoneRequeue = 2 * time.Second

// reconcileReleasing serves Suspending and Retrying: both release the
// cluster and the submitter Job, wait until they are really gone (no leaked
// Pods; with retryStrategy BlockingRecreate, no Pod of theirs left), let the batch scheduler release its reservation, forget the
// attempt in the status, and then go on to Suspended or back to New for the
// next attempt. It runs to the end whatever spec.suspend
// becomes meanwhile, which makes suspension atomic.
func (r *Reconciler) reconcileReleasing(ctx context.Context, s *scope) (passsteps.Result, error) {
	job := s.job
	clusterGone, err := r.deleteCluster(ctx, job)
	if err != nil {
		return passsteps.Result{}, err
	}
	submitterGone, err := r.deleteSubmitterJob(ctx, job)
	if err != nil {
		return passsteps.Result{}, err
	}
	if clusterGone && submitterGone {
		// resetAttempt forgets their names: the API server has the last word.
		if clusterGone, submitterGone, err = r.releasedOnAPIServer(ctx, job); err != nil {
			return passsteps.Result{}, err
		}
	}
	if !clusterGone || !submitterGone {
		ctrl.LoggerFrom(ctx).Info("Waiting for the RayCluster and the submitter to be deleted")
		return requeue()
	}
	if job.Spec.BlockingRecreate() {
		n, err := r.previousAttemptPods(ctx, job)
		if err != nil {
			return passsteps.Result{}, err
		}
		if n > 0 {
			r.events.Eventf(job, nil, corev1.EventTypeNormal, reasonWaitingForPreviousAttempt, actionDelete,
				"Waiting for %d Pods of execution attempt %d to be gone before the next attempt", n, ptr.Deref(job.Status.ExecutionAttempt, 0))
			return passsteps.Requeue(podsGoneRequeue), nil
		}
	}
	// Before resetAttempt forgets the cluster's name; a failure keeps the
	// RayJob here and retries, rather than leaving the reservation behind.
	if err := r.cleanupBatchScheduler(ctx, job); err != nil {
		return passsteps.Result{}, err
	}
	resetAttempt(job)
	if job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspending {
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspended
	} else {
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
	}
	return requeue()
}

// releasedOnAPIServer checks with the API server that the attempt's cluster
// and submitter Job, which the cache no longer (or not yet) has, are gone,
// and deletes those still there. The cache may not have seen a cluster
// created a moment ago, for a RayJob suspended or failed right after its
// cluster was created: believing it, the RayJob forgot the cluster, left
// it running and created another for its next attempt.
func (r *Reconciler) releasedOnAPIServer(ctx context.Context, job *rayv1.RayJob) (clusterGone, submitterGone bool, err error) {
	clusterGone, submitterGone = true, true
	if !job.Spec.UsesClusterSelector() && job.Status.RayClusterName != "" {
		cluster := &rayv1.RayCluster{}
		if clusterGone, err = r.deleteFromAPIServer(ctx, job, cluster, clusterKey(job), clusterowner.ReasonDeletedRayCluster, "RayCluster"); err != nil {
			return false, false, err
		}
	}
	if job.Spec.EffectiveSubmissionMode() == rayv1.K8sJobMode {
		submitter := &batchv1.Job{}
		if submitterGone, err = r.deleteFromAPIServer(ctx, job, submitter, submitterJobKey(job), reasonDeletedSubmitter, "submitter K8s Job"); err != nil {
			return false, false, err
		}
	}
	return clusterGone, submitterGone, nil
}

// deleteFromAPIServer reads obj by key from the API server and deletes it
// in the background (its dependents after it) unless it is gone or going;
// it reports true once it is gone.
func (r *Reconciler) deleteFromAPIServer(ctx context.Context, job *rayv1.RayJob, obj client.Object, key types.NamespacedName, reason, what string) (bool, error) {
	if err := r.LiveReader.Get(ctx, key, obj); err != nil {
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return false, nil
	}
	return false, r.Children().Delete(ctx, job, obj, childwrite.Event{Reason: reason, Note: "Deleted " + what + " " + key.String()},
		childwrite.DeleteOptions(client.PropagationPolicy(metav1.DeletePropagationBackground)), childwrite.NotFoundAsDeleted())
}

// resetAttempt clears what belonged to the released attempt, so that the
// next one gets a new cluster name and job id. The failed and succeeded
// counters stay.
func resetAttempt(job *rayv1.RayJob) {
	status := &job.Status
	status.RayClusterStatus = rayv1.RayClusterStatus{}
	status.RayClusterName = ""
	status.DashboardURL = ""
	status.JobID = ""
	status.Message = ""
	status.Reason = ""
	status.RayJobStatusInfo = rayv1.RayJobStatusInfo{}
	status.JobStatusCheckFailureStartTime = nil
	status.JobStatus = rayv1.JobStatusNew
}

// reconcileSuspended waits for spec.suspend to be cleared, then starts over
// from New.
func (r *Reconciler) reconcileSuspended(_ context.Context, s *scope) (passsteps.Result, error) {
	if s.job.Spec.Suspend {
		return passsteps.Result{}, nil
	}
	s.job.Status.JobStatus = rayv1.JobStatusNew
	s.job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
	return requeue()
}
