package rayjob

import (
	"errors"
	"fmt"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// submitterFinishedTimeout is how long a Ray job may stay non-final after
// its submitter finished before the RayJob is failed.
const submitterFinishedTimeout = 30 * time.Second

// submitterAnswerGrace is how much longer than submitterFinishedTimeout a
// dashboard that fails to answer is asked before the RayJob fails without an
// answer: a single failed request at the timeout (a restart, a blip) would
// otherwise fail a Ray job that succeeded.
const submitterAnswerGrace = 30 * time.Second

// SubmitterDecisionDelay is the longest a Running RayJob whose submitter
// finished stays undecided while its dashboard does not answer, for tests
// that bound their waits on the controller.
const SubmitterDecisionDelay = submitterFinishedTimeout + submitterAnswerGrace

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
// still not final: nothing will follow the job anymore. err is the pass's
// dashboard outcome: a Ray job the dashboard reported non-final (err nil) or
// unknown fails the RayJob at the timeout; a request that got no answer
// fails it only once the dashboard has had submitterAnswerGrace more, in
// which the passes ask again (submitterRequeueWithin).
func (r *Reconciler) failIfSubmitterFinishedLongAgo(job *rayv1.RayJob, finishedAt *time.Time, err error) bool {
	if r.submitterTimeLeft(finishedAt) > 0 {
		return false
	}
	unanswered := err != nil && !errors.Is(err, dashboard.ErrNotFound)
	if unanswered && r.answerGraceLeft(finishedAt) > 0 {
		return false
	}
	job.Status.JobStatus = rayv1.JobStatusFailed
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	job.Status.Reason = rayv1.JobDeploymentStatusTransitionGracePeriodExceeded
	job.Status.Message = fmt.Sprintf("The RayJob submitter finished at %v but the ray job did not reach terminal state within %v",
		finishedAt.Format(time.DateTime), submitterFinishedTimeout)
	if unanswered {
		job.Status.Message += fmt.Sprintf("; the dashboard did not answer in the %v after that: %v", submitterAnswerGrace, err)
	}
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

// answerGraceLeft is how much of submitterAnswerGrace is left to a
// dashboard that has not answered since the submitter-finished timeout.
func (r *Reconciler) answerGraceLeft(finishedAt *time.Time) time.Duration {
	return finishedAt.Add(submitterFinishedTimeout + submitterAnswerGrace).Sub(r.now())
}

// submitterRequeueWithin is the longest a pass that got no answer from the
// dashboard may requeue for: until the submitter-finished timeout, and past
// it defaultRequeue (the grace is short, so the dashboard's back-off, which
// may exceed it, does not apply) but not past the end of the answer grace.
func (r *Reconciler) submitterRequeueWithin(finishedAt *time.Time) time.Duration {
	if left := r.submitterTimeLeft(finishedAt); left > 0 {
		return left
	}
	return min(defaultRequeue, r.answerGraceLeft(finishedAt))
}

// askWithin is how long the dashboard's back-off may keep a pass from
// asking about the Ray job: until the first timeout that is decided on the
// dashboard's answer, the status check timeout or the submitter-finished
// timeout; past the latter every pass asks. Deliberate difference: KubeRay
// fails a RayJob at the submitter-finished timeout without asking; here the
// passes at and after that timeout ask (past the job info cache), so a Ray
// job whose end a back-off or a restart hid is reported with its real
// outcome. A Ray job reported still non-final fails the RayJob then; a
// dashboard that does not answer is asked again every defaultRequeue until
// submitterAnswerGrace has passed too, and only then fails it.
func (r *Reconciler) askWithin(job *rayv1.RayJob, sub submitterState) time.Duration {
	return min(r.statusCheckTimeLeft(job), r.submitterTimeLeft(sub.finishedAt))
}
