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
	if r.submitterTimeLeft(finishedAt) > 0 {
		return false
	}
	job.Status.JobStatus = rayv1.JobStatusFailed
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	job.Status.Reason = rayv1.JobDeploymentStatusTransitionGracePeriodExceeded
	job.Status.Message = fmt.Sprintf("The RayJob submitter finished at %v but the ray job did not reach terminal state within %v",
		finishedAt.Format(time.DateTime), submitterFinishedTimeout)
	return true
}

// submitterTimeLeft is how long the Ray job of a submitter that finished at
// finishedAt may still be non-final; a very long time while the submitter
// runs (finishedAt nil).
func (r *Reconciler) submitterTimeLeft(finishedAt *time.Time) time.Duration {
	if finishedAt == nil {
		return time.Duration(1<<63 - 1)
	}
	return finishedAt.Add(submitterFinishedTimeout).Sub(r.now())
}

// askWithin is how long the dashboard's back-off may keep a pass from
// asking about the Ray job: until the first timeout that is decided on the
// dashboard's answer, the status check timeout or the submitter-finished
// timeout. Deliberate difference: KubeRay fails a RayJob at the
// submitter-finished timeout without asking; here the pass at that timeout
// asks once more, so a Ray job whose end a back-off hid is reported with its
// real outcome, and only a dashboard that still fails or a Ray job still not
// final fails the RayJob.
func (r *Reconciler) askWithin(job *rayv1.RayJob, sub submitterState) time.Duration {
	return min(r.statusCheckTimeLeft(job), r.submitterTimeLeft(sub.finishedAt))
}
