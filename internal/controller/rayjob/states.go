package rayjob

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// stateHandler advances a RayJob that is in one JobDeploymentStatus: it is
// the one step of the pass. It changes s.job.Status in memory; Reconcile
// writes it afterwards. The result says when to look again.
type stateHandler func(ctx context.Context, s *scope) (passsteps.Result, error)

// stateHandlers maps every JobDeploymentStatus to its handler.
func (r *Reconciler) stateHandlers() map[rayv1.JobDeploymentStatus]stateHandler {
	return map[rayv1.JobDeploymentStatus]stateHandler{
		rayv1.JobDeploymentStatusNew:              r.reconcileNew,
		rayv1.JobDeploymentStatusInitializing:     r.reconcileInitializing,
		rayv1.JobDeploymentStatusWaiting:          r.reconcileWaiting,
		rayv1.JobDeploymentStatusRunning:          r.reconcileRunning,
		rayv1.JobDeploymentStatusSuspending:       r.reconcileReleasing,
		rayv1.JobDeploymentStatusRetrying:         r.reconcileReleasing,
		rayv1.JobDeploymentStatusSuspended:        r.reconcileSuspended,
		rayv1.JobDeploymentStatusComplete:         r.reconcileFinished,
		rayv1.JobDeploymentStatusFailed:           r.reconcileFinished,
		rayv1.JobDeploymentStatusValidationFailed: reconcileValidationFailed,
	}
}

// stepsFor are the steps of a pass over a RayJob in status: its handler,
// named by the status. An unknown status (written by a newer operator, say)
// is only looked at again later.
func (r *Reconciler) stepsFor(status rayv1.JobDeploymentStatus) []passsteps.Step[*scope] {
	h, ok := r.handlers[status]
	if !ok {
		h = func(ctx context.Context, _ *scope) (passsteps.Result, error) {
			ctrl.LoggerFrom(ctx).Info("Unknown JobDeploymentStatus; waiting", "status", status)
			return passsteps.Requeue(defaultRequeue), nil
		}
	}
	return []passsteps.Step[*scope]{{Name: string(status), Run: h}}
}

// requeue is the result of a handler that wants the default poll interval.
func requeue() (passsteps.Result, error) {
	return passsteps.Requeue(defaultRequeue), nil
}

// reconcileValidationFailed keeps a RayJob whose spec was rejected where it
// is: ValidationFailed is final.
func reconcileValidationFailed(context.Context, *scope) (passsteps.Result, error) {
	return passsteps.Result{}, nil
}
