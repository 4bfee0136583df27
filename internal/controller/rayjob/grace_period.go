package rayjob

import (
	"fmt"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// submitterFinishedTimeout is how long a Ray job may stay non-final after
// its submitter finished before the RayJob is failed.
const submitterFinishedTimeout = 30 * time.Second

// finishIfGracePeriodPassed ends a RayJob still Running although its Ray job
// ended longer than the transition grace period ago (the submitter never
// finished, for instance because the cluster went away): Complete, or Failed
// when the Ray job failed, with JobDeploymentStatusTransitionGracePeriodExceeded.
func (r *Reconciler) finishIfGracePeriodPassed(job *rayv1.RayJob) bool {
	endTime := job.Status.RayJobStatusInfo.EndTime
	if !rayv1.IsJobTerminal(job.Status.JobStatus) || endTime == nil {
		return false
	}
	if r.now().Before(endTime.Add(r.opts.TransitionGracePeriod)) {
		return false
	}
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
	if job.Status.JobStatus == rayv1.JobStatusFailed {
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	}
	job.Status.Reason = rayv1.JobDeploymentStatusTransitionGracePeriodExceeded
	job.Status.Message = "JobDeploymentStatus does not transition to Complete or Failed within the grace period after JobStatus reaches a terminal state."
	return true
}

// failIfSubmitterFinishedLongAgo fails a RayJob whose submitter finished
// (finishedAt) more than submitterFinishedTimeout ago while the Ray job is
// still not final: nothing will follow the job anymore.
func (r *Reconciler) failIfSubmitterFinishedLongAgo(job *rayv1.RayJob, finishedAt *time.Time) bool {
	if finishedAt == nil || r.now().Before(finishedAt.Add(submitterFinishedTimeout)) {
		return false
	}
	job.Status.JobStatus = rayv1.JobStatusFailed
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	job.Status.Reason = rayv1.JobDeploymentStatusTransitionGracePeriodExceeded
	job.Status.Message = fmt.Sprintf("The RayJob submitter finished at %v but the ray job did not reach terminal state within %v",
		finishedAt.Format(time.DateTime), submitterFinishedTimeout)
	return true
}
