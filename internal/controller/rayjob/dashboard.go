package rayjob

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// dashboardClient returns a client of the job's dashboard, with the
// cluster's auth token when it has one. A missing auth Secret is also a
// warning event on the RayJob.
func (r *Reconciler) dashboardClient(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (dashboard.Client, error) {
	dash, err := r.dashboards.Client(ctx, cluster, job.Status.DashboardURL)
	if errors.Is(err, dashboard.ErrAuthSecretMissing) {
		r.events.Eventf(job, nil, corev1.EventTypeWarning, reasonAuthSecretNotFound, actionGet, "%v", err)
	}
	return dash, err
}

// jobInfo asks the dashboard about the RayJob's Ray job, unless a recent
// failure says to wait (*errBackingOff) and no timeout that needs an answer
// has been reached (askWithin; then it asks a last time). A failed request
// is a *dashboardError; ErrNotFound and ErrAgain are answers and stay as
// they are.
func (r *Reconciler) jobInfo(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster, askWithin time.Duration) (*dashboard.JobInfo, error) {
	if wait := r.dashFailures.Wait(dashboardCall(job), r.now()); wait > 0 && askWithin > 0 {
		return nil, &errBackingOff{wait: wait}
	}
	dash, err := r.dashboardClient(ctx, job, cluster)
	if err != nil {
		return nil, err
	}
	info, err := dash.GetJobInfo(ctx, job.Status.JobID)
	return r.jobInfoAnswer(job, info, err)
}

// jobInfoAnswer sorts a job info request's outcome as jobInfo returns it.
func (r *Reconciler) jobInfoAnswer(job *rayv1.RayJob, info *dashboard.JobInfo, err error) (*dashboard.JobInfo, error) {
	switch {
	case err == nil:
		r.dashFailures.Forget(dashboardCall(job))
		return info, nil
	case errors.Is(err, dashboard.ErrNotFound), errors.Is(err, dashboard.ErrAgain):
		return nil, err
	}
	return nil, jobInfoFailed(job, err)
}

// recheckJobInfo is the last look before a decision that is final (the
// submitter-finished timeout): when jobInfo answered from the job info cache
// (AsyncJobInfoQuery), with a non-final job, a failure or no answer yet, the
// dashboard itself is asked. A cached answer can be a poll's old failure, and
// a cache whose polls never come back (an operator restarted more often than
// it polls) would otherwise keep the RayJob waiting past the timeout for
// good. Without the cache jobInfo's answer was the dashboard's already, and
// is returned as it is.
func (r *Reconciler) recheckJobInfo(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster, info *dashboard.JobInfo, err error) (*dashboard.JobInfo, error) {
	direct, dashErr := r.pastJobInfoCache(ctx, job, cluster)
	if dashErr != nil || direct == nil {
		return info, err
	}
	info, err = direct.GetJobInfo(ctx, job.Status.JobID)
	return r.jobInfoAnswer(job, info, err)
}

// pastJobInfoCache returns the client that asks the job's dashboard itself
// when the job info cache (AsyncJobInfoQuery) stands in front of it, and nil
// when it does not: then the answers the pass has came from the dashboard.
func (r *Reconciler) pastJobInfoCache(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (dashboard.Client, error) {
	dash, err := r.dashboardClient(ctx, job, cluster)
	if err != nil {
		return nil, err
	}
	if direct, cached := dashboard.Uncached(dash); cached {
		return direct, nil
	}
	return nil, nil
}

// jobInfoFailed is the *dashboardError of a failed job info request.
func jobInfoFailed(job *rayv1.RayJob, err error) *dashboardError {
	return &dashboardError{what: "Failed to get Ray job " + job.Status.JobID + " from the dashboard",
		reason: reasonFailedToGetJobInfo, action: actionGet, err: err}
}

// confirmJobUnknown asks the dashboard itself, not the job info cache
// (AsyncJobInfoQuery), whether it still does not know the RayJob's Ray job:
// a cached "not found" may come from a poll made before the submitter
// submitted, and failing the RayJob on it would be final. Without the cache
// the "not found" came from the dashboard already and is not asked again. A
// failed request is a *dashboardError.
func (r *Reconciler) confirmJobUnknown(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (bool, error) {
	direct, err := r.pastJobInfoCache(ctx, job, cluster)
	if err != nil {
		return false, err
	}
	if direct == nil {
		return true, nil
	}
	_, err = direct.GetJobInfo(ctx, job.Status.JobID)
	switch {
	case errors.Is(err, dashboard.ErrNotFound):
		return true, nil
	case err != nil:
		return false, jobInfoFailed(job, err)
	}
	return false, nil
}

// submitOverHTTP submits the Ray job through the dashboard (HTTPMode). The
// submission id makes it idempotent: an id Ray already knows is success.
func (r *Reconciler) submitOverHTTP(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) error {
	req, err := dashboard.NewJobSubmitRequest(job)
	if err != nil {
		return err
	}
	dash, err := r.dashboardClient(ctx, job, cluster)
	if err != nil {
		return err
	}
	if _, err := dash.SubmitJob(ctx, req); err != nil && !errors.Is(err, dashboard.ErrSubmissionIDInUse) {
		r.events.Eventf(job, nil, corev1.EventTypeWarning, reasonFailedToSubmitJob, actionSubmit, "Failed to submit Ray job %s: %v", job.Status.JobID, err)
		return &dashboardError{what: "Failed to submit Ray job " + job.Status.JobID, err: err}
	}
	r.events.Eventf(job, nil, corev1.EventTypeNormal, reasonSubmittedJob, actionSubmit, "Submitted Ray job %s to %s", job.Status.JobID, job.Status.DashboardURL)
	return nil
}
