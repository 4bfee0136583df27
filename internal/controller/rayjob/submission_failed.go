package rayjob

import (
	"context"
	"errors"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// endFailedSubmission ends the Running RayJob whose submitter failed
// (failure says how: the K8sJobMode Job failed, the SidecarMode submitter
// container exited non-zero, or, with SidecarSubmitterRestart, it exceeded
// its restarts). Every decision taken from the submitter alone goes through
// here.
//
// With a Ray job status already terminal, the RayJob saw the Ray job end
// before the submitter: KubeRay's order of events, decided as KubeRay does
// (failSubmission: AppFailed when the Ray job failed, else SubmissionFailed
// with the submitter's message).
//
// Deliberate difference (issue #53): KubeRay decides from the submitter and
// the status an earlier pass read, so a Ray job that ended before the
// RayJob ever read it (a SidecarMode head runs the job while a worker is
// not Ready yet and the RayJob still waits in Initializing; a dashboard
// back-off; an operator restart) is reported as a failed submission. Here
// the dashboard is asked first, past the job info cache (recheckJobInfo):
//   - a terminal Ray job ends the RayJob as Running does (applyJobInfo):
//     Failed AppFailed with jobStatus FAILED, or Complete, with Ray's
//     message and times;
//   - a Ray job the dashboard does not know, or reports still running, is
//     SubmissionFailed with the submitter's message, as in KubeRay;
//   - a failed request is retried as Running retries it (dashboardFailed:
//     back-off, status message, event), and once the status check timeout
//     has passed the RayJob is SubmissionFailed, the message saying that
//     the dashboard never answered; a missing auth Secret cannot be
//     retried and decides at once.
func (r *Reconciler) endFailedSubmission(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster, failure string) (passsteps.Result, error) {
	if rayv1.IsJobTerminal(job.Status.JobStatus) {
		failSubmission(job, failure)
		return requeue()
	}
	info, err := r.jobInfo(ctx, job, cluster, r.statusCheckTimeLeft(job))
	var backingOff *errBackingOff
	if errors.As(err, &backingOff) {
		return passsteps.Result{RequeueAfter: min(backingOff.wait, r.statusCheckTimeLeft(job))}, nil
	}
	if err != nil || !rayv1.IsJobTerminal(info.JobStatus) {
		info, err = r.recheckJobInfo(ctx, job, cluster, info, err)
	}
	var dashErr *dashboardError
	switch {
	case err == nil:
		applyJobInfo(job, cluster, info, true)
		if !rayv1.IsJobTerminal(info.JobStatus) {
			failSubmission(job, failure)
		}
	case errors.Is(err, dashboard.ErrNotFound), errors.Is(err, dashboard.ErrAuthSecretMissing):
		failSubmission(job, failure)
	case errors.Is(err, dashboard.ErrAgain):
		// No answer yet; the next pass asks again.
	case errors.As(err, &dashErr):
		return r.dashboardFailedElse(ctx, job, dashErr, func(job *rayv1.RayJob) {
			failSubmission(job, failure+"; the Ray job's status is unknown: "+r.statusCheckTimeoutMessage(job))
		})
	default:
		return passsteps.Result{}, err
	}
	return requeue()
}
