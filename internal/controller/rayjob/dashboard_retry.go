package rayjob

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Back-off of a Running RayJob whose dashboard fails (5xx, timeout, refused
// connection, unparsable answer): the first retry comes after
// dashboardRetryBase, each further consecutive failure doubles the wait, up
// to dashboardRetryMax. A success resets it. The RayJob stays Running (a
// dashboard outage is not the job's failure; activeDeadlineSeconds bounds
// it when the user wants a bound).
const (
	dashboardRetryBase = defaultRequeue
	dashboardRetryMax  = time.Minute
)

// dashboardRetryAfter is the wait after the n-th consecutive failure (n ≥ 1).
func dashboardRetryAfter(n int) time.Duration {
	d := dashboardRetryBase
	for i := 1; i < n && d < dashboardRetryMax; i++ {
		d *= 2
	}
	return min(d, dashboardRetryMax)
}

// dashboardFailure is one RayJob's run of consecutive dashboard failures.
type dashboardFailure struct {
	uid     types.UID
	count   int
	retryAt time.Time
}

// dashboardFailures remembers, in memory, which RayJobs are backing off from
// their dashboard, so that a pass triggered by a watch event (the status
// write of the failing pass, say) does not ask a failing dashboard again
// before the back-off ends. An operator restart forgets it, which only
// means one early retry.
type dashboardFailures struct {
	mu    sync.Mutex
	byJob map[types.NamespacedName]dashboardFailure
}

// wait returns how long the RayJob must still wait before asking its
// dashboard again; 0 means ask now.
func (d *dashboardFailures) wait(job *rayv1.RayJob, now time.Time) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.byJob[jobKey(job)]
	if !ok || f.uid != job.UID || !now.Before(f.retryAt) {
		return 0
	}
	return f.retryAt.Sub(now)
}

// fail counts a failure at now and returns the wait before the next try.
func (d *dashboardFailures) fail(job *rayv1.RayJob, now time.Time) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byJob == nil {
		d.byJob = map[types.NamespacedName]dashboardFailure{}
	}
	f := d.byJob[jobKey(job)]
	if f.uid != job.UID {
		f = dashboardFailure{uid: job.UID}
	}
	f.count++
	wait := dashboardRetryAfter(f.count)
	f.retryAt = now.Add(wait)
	d.byJob[jobKey(job)] = f
	return wait
}

// forget ends a RayJob's back-off: the dashboard answered, the RayJob left
// Running, or it is gone.
func (d *dashboardFailures) forget(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byJob, key)
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
// 16 minutes after a long outage).
func (r *Reconciler) dashboardFailed(ctx context.Context, job *rayv1.RayJob, err *dashboardError) (ctrl.Result, error) {
	wait := r.dashFailures.fail(job, r.now())
	message := fmt.Sprintf("%v (retrying in %s)", err, wait)
	ctrl.LoggerFrom(ctx).Info("Ray dashboard request failed; backing off", "error", err.Error(), "retryAfter", wait)
	if err.reason != "" {
		r.event(job, corev1.EventTypeWarning, err.reason, err.action, "%s", message)
	}
	job.Status.Message = message
	return ctrl.Result{RequeueAfter: wait}, nil
}
