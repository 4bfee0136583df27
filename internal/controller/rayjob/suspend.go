package rayjob

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// reconcileReleasing serves Suspending and Retrying: both release the
// cluster and the submitter Job, wait until they are really gone (no leaked
// Pods), let the batch scheduler release its reservation, forget the
// attempt in the status, and then go on to Suspended or back to New for the
// next attempt. It runs to the end whatever spec.suspend
// becomes meanwhile, which makes suspension atomic.
func (r *Reconciler) reconcileReleasing(ctx context.Context, s *scope) (ctrl.Result, error) {
	job := s.job
	clusterGone, err := r.deleteCluster(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	submitterGone, err := r.deleteSubmitterJob(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !clusterGone || !submitterGone {
		ctrl.LoggerFrom(ctx).Info("Waiting for the RayCluster and the submitter to be deleted")
		return requeue()
	}
	// Before resetAttempt forgets the cluster's name; a failure keeps the
	// RayJob here and retries, rather than leaving the reservation behind.
	if err := r.cleanupBatchScheduler(ctx, job); err != nil {
		return ctrl.Result{}, err
	}
	resetAttempt(job)
	if job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspending {
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspended
	} else {
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
	}
	return requeue()
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
	status.JobStatus = rayv1.JobStatusNew
}

// reconcileSuspended waits for spec.suspend to be cleared, then starts over
// from New.
func (r *Reconciler) reconcileSuspended(_ context.Context, s *scope) (ctrl.Result, error) {
	if s.job.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	s.job.Status.JobStatus = rayv1.JobStatusNew
	s.job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
	return requeue()
}
