package rayjob

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// dashboardCall is the back-off key of a RayJob's dashboard requests
// (job info and submission share one back-off). A Running RayJob whose
// dashboard fails (5xx, timeout, refused connection, unparsable answer)
// retries after dashboard.DefaultRetryBase, doubling up to
// dashboard.DefaultRetryMax; a success resets it. The RayJob stays Running
// (a dashboard outage is not the job's failure; activeDeadlineSeconds
// bounds it when the user wants a bound).
func dashboardCall(job *rayv1.RayJob) dashboard.BackoffKey {
	return dashboard.BackoffKey{Object: jobKey(job), UID: job.UID, Call: "dashboard"}
}

// jobKey names a RayJob.
func jobKey(job *rayv1.RayJob) types.NamespacedName {
	return types.NamespacedName{Namespace: job.Namespace, Name: job.Name}
}

// dashboardError is a failed request to the dashboard itself (not a failure
// to build a client, such as a missing auth Secret). what says, for the
// status message, what the controller was doing; reason and action are
// those of the warning event, empty when the caller already recorded one.
type dashboardError struct {
	what           string
	reason, action string
	err            error
}

func (e *dashboardError) Error() string { return e.what + ": " + e.err.Error() }
func (e *dashboardError) Unwrap() error { return e.err }

// errBackingOff is returned instead of asking a dashboard that failed
// recently; wait is what is left of the back-off.
type errBackingOff struct{ wait time.Duration }

func (e *errBackingOff) Error() string {
	return fmt.Sprintf("backing off from the Ray dashboard for %s", e.wait)
}

// dashboardFailed records a failed dashboard request of a Running RayJob:
// the status message and a warning event say what failed, and the pass
// requeues after the back-off instead of returning the error (which would
// requeue after controller-runtime's rate limiter: 5 ms at first, and up to
// 16 minutes after a long outage). The first failure also starts the
// status check timeout: the pass requeues no later than its end, and a
// failure after it fails the RayJob with JobStatusCheckTimeoutExceeded
// (status_check.go).
func (r *Reconciler) dashboardFailed(ctx context.Context, job *rayv1.RayJob, err *dashboardError) (passsteps.Result, error) {
	return r.dashboardFailedElse(ctx, job, err, r.failStatusCheckTimedOut)
}

// dashboardFailedElse is dashboardFailed with another end: timedOut ends
// the RayJob once the status check timeout has passed.
func (r *Reconciler) dashboardFailedElse(ctx context.Context, job *rayv1.RayJob, err *dashboardError, timedOut func(*rayv1.RayJob)) (passsteps.Result, error) {
	wait := r.dashFailures.Fail(dashboardCall(job), r.now(), err.reason, err.Error()).Wait
	message := fmt.Sprintf("%v (retrying in %s)", err, wait)
	ctrl.LoggerFrom(ctx).Info("Ray dashboard request failed; backing off", "error", err.Error(), "retryAfter", wait)
	if err.reason != "" {
		r.events.Eventf(job, nil, corev1.EventTypeWarning, err.reason, err.action, "%s", message)
	}
	job.Status.Message = message
	left := r.noteStatusCheckFailed(job)
	if left <= 0 {
		timedOut(job)
		return requeue()
	}
	return passsteps.Result{RequeueAfter: min(wait, left)}, nil
}
