package rayjob

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// reconcileRunning follows a submitted Ray job. The RayJob ends (Complete or
// Failed) when the Ray job is final and, in the modes with a submitter, the
// submitter has finished too; a failed submitter ends it earlier
// (endFailedSubmission).
func (r *Reconciler) reconcileRunning(ctx context.Context, s *scope) (passsteps.Result, error) {
	job := s.job
	if suspendIfRequested(job) || r.failIfActiveDeadlinePassed(job) || r.finishIfGracePeriodPassed(job) {
		return requeue()
	}
	cluster, err := r.getOrCreateCluster(ctx, job)
	if err != nil {
		return passsteps.Result{}, err
	}
	if err := r.reconcileHeadService(ctx, job, cluster); err != nil {
		return passsteps.Result{}, err
	}
	var sub submitterState
	if hasSubmitter(job) {
		if sub, err = r.observeSubmitter(ctx, job, cluster); err != nil {
			return passsteps.Result{}, err
		}
		if sub.headGone {
			return requeue()
		}
		if sub.failure != "" {
			return r.endFailedSubmission(ctx, job, cluster, sub.failure)
		}
	}
	// KubeRay applies the submitter-finished timeout before asking the
	// dashboard. Seed 000 describes it as failing a RayJob whose submitter
	// finished while the Ray job has not reached a terminal state, so the
	// dashboard is asked first: a Ray job that did end (seen late, after an
	// operator restart or a slow dashboard) completes with its real status
	// instead of being failed with JobStatus FAILED.
	info, err := r.jobInfo(ctx, job, cluster, r.askWithin(job, sub))
	if r.submitterTimeLeft(sub.finishedAt) <= 0 && (err != nil || !rayv1.IsJobTerminal(info.JobStatus)) {
		info, err = r.recheckJobInfo(ctx, job, cluster, info, err)
	}
	switch {
	case errors.Is(err, dashboard.ErrAgain):
		return requeue()
	case err != nil || !rayv1.IsJobTerminal(info.JobStatus):
		if r.failIfSubmitterFinishedLongAgo(job, sub.finishedAt, err) {
			return requeue()
		}
	}
	if err != nil {
		return r.handleJobInfoError(ctx, job, cluster, sub, err)
	}
	applyJobInfo(job, cluster, info, !hasSubmitter(job) || sub.finishedAt != nil)
	return requeue()
}

// handleJobInfoError deals with a dashboard that failed or does not know
// the job. A failed request (5xx, timeout, refused connection, unparsable
// answer) keeps the RayJob Running and backs off (dashboardFailed). A job
// the dashboard does not know is submitted (again, for instance on a new
// cluster) in HTTPMode; with a finished submitter the submission was lost
// and the RayJob fails; with a submitter still running, it has not
// submitted yet and the RayJob looks again at the usual interval.
func (r *Reconciler) handleJobInfoError(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster, sub submitterState, err error) (passsteps.Result, error) {
	var backingOff *errBackingOff
	if errors.As(err, &backingOff) {
		return passsteps.Result{RequeueAfter: min(backingOff.wait, r.askWithin(job, sub))}, nil
	}
	var dashErr *dashboardError
	if errors.As(err, &dashErr) {
		res, err := r.dashboardFailed(ctx, job, dashErr)
		res.RequeueAfter = min(res.RequeueAfter, r.submitterRequeueWithin(sub.finishedAt))
		return res, err
	}
	if !errors.Is(err, dashboard.ErrNotFound) {
		return passsteps.Result{}, err
	}
	if job.Spec.SubmissionMode == rayv1.HTTPMode {
		if err := r.submitOverHTTP(ctx, job, cluster); err != nil {
			if errors.As(err, &dashErr) {
				return r.dashboardFailed(ctx, job, dashErr)
			}
			return passsteps.Result{}, err
		}
		r.dashFailures.Forget(dashboardCall(job))
		statusCheckSucceeded(job)
		return requeue()
	}
	r.dashFailures.Forget(dashboardCall(job))
	if sub.finishedAt != nil {
		gone, err := r.confirmJobUnknown(ctx, job, cluster)
		switch {
		case errors.As(err, &dashErr):
			return r.dashboardFailed(ctx, job, dashErr)
		case err != nil:
			return passsteps.Result{}, err
		case !gone:
			return requeue()
		}
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
		job.Status.Reason = rayv1.AppFailed
		job.Status.Message = "Submitter completed but Ray job not found in RayCluster."
	}
	return requeue()
}

// applyJobInfo copies what the dashboard reports into the status and ends
// the RayJob when the Ray job is final and nothing else is pending
// (submitterDone).
func applyJobInfo(job *rayv1.RayJob, cluster *rayv1.RayCluster, info *dashboard.JobInfo, submitterDone bool) {
	statusCheckSucceeded(job)
	status := &job.Status
	status.RayClusterStatus = cluster.Status
	status.JobStatus = info.JobStatus
	status.Message = info.Message
	status.Reason = ""
	status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	if rayv1.IsJobTerminal(info.JobStatus) && submitterDone {
		status.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
		if info.JobStatus == rayv1.JobStatusFailed {
			status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
			status.Reason = rayv1.AppFailed
		}
	}
	if info.StartTime != 0 {
		status.RayJobStatusInfo.StartTime = unixMilli(info.StartTime)
	}
	if info.EndTime != 0 {
		status.RayJobStatusInfo.EndTime = unixMilli(info.EndTime)
	}
}

// unixMilli converts the dashboard's millisecond timestamps. Ray keeps them
// as int64 internally, so the conversion cannot overflow in practice.
func unixMilli(ms uint64) *metav1.Time {
	return &metav1.Time{Time: time.UnixMilli(int64(ms))} //nolint:gosec // Ray timestamps fit in int64.
}

// hasSubmitter reports whether the RayJob's mode runs a submitter whose end
// the RayJob must wait for.
func hasSubmitter(job *rayv1.RayJob) bool {
	switch job.Spec.SubmissionMode {
	case rayv1.K8sJobMode, rayv1.SidecarMode, "":
		return true
	}
	return false
}
