package rayjob

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// The status check timeout (RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS) bounds how
// long a Running RayJob may go without a successful dashboard request about
// its Ray job. status.jobStatusCheckFailureStartTime remembers when the
// requests started failing, so that the bound survives operator restarts.
//
// Deliberate difference: KubeRay checks the timeout at the start of a pass,
// before asking the dashboard, and asks every 3 s. Here requests back off
// up to a minute (dashboardCall), so checking first would fail a RayJob
// whose dashboard came back during the last back-off. Instead the timeout
// ends the back-off: the pass at the timeout asks once more, and the RayJob
// fails only when that request fails too.

// noteStatusCheckFailed records when the dashboard requests of the RayJob
// started failing (the first failure only) and returns how long is left
// before the status check timeout (zero or less: it has passed).
func (r *Reconciler) noteStatusCheckFailed(job *rayv1.RayJob) time.Duration {
	now := r.now()
	if job.Status.JobStatusCheckFailureStartTime == nil {
		// The API server keeps whole seconds; keeping the same value here
		// makes the timeout the same before and after a status round trip.
		start := metav1.NewTime(now.Truncate(time.Second))
		job.Status.JobStatusCheckFailureStartTime = &start
	}
	return r.statusCheckTimeLeft(job)
}

// statusCheckTimeLeft is how long the dashboard of a RayJob whose requests
// are failing may still fail; a very long time when they are not failing.
func (r *Reconciler) statusCheckTimeLeft(job *rayv1.RayJob) time.Duration {
	since := job.Status.JobStatusCheckFailureStartTime
	if since == nil {
		return time.Duration(1<<63 - 1)
	}
	return since.Add(r.opts.StatusCheckTimeout).Sub(r.now())
}

// statusCheckSucceeded clears the failure start time: the dashboard answered.
func statusCheckSucceeded(job *rayv1.RayJob) {
	job.Status.JobStatusCheckFailureStartTime = nil
}

// failStatusCheckTimedOut fails a RayJob whose dashboard requests have
// been failing for the status check timeout, with
// JobStatusCheckTimeoutExceeded (never retried). jobStatus is left as it
// was: nobody knows what became of the Ray job. The start time is printed
// in UTC (KubeRay prints it in the operator's local time zone) so that the
// message does not depend on where the operator runs.
func (r *Reconciler) failStatusCheckTimedOut(job *rayv1.RayJob) {
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	job.Status.Reason = rayv1.JobStatusCheckTimeoutExceeded
	job.Status.Message = r.statusCheckTimeoutMessage(job)
}

// statusCheckTimeoutMessage says since when the dashboard requests of the
// RayJob have been failing and that the timeout has passed.
func (r *Reconciler) statusCheckTimeoutMessage(job *rayv1.RayJob) string {
	return fmt.Sprintf("Job status checks have been failing since %v; exceeded timeout of %ds",
		job.Status.JobStatusCheckFailureStartTime.UTC().Format(time.DateTime), int(r.opts.StatusCheckTimeout/time.Second))
}
