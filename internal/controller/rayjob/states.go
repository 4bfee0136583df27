package rayjob

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// stateHandler advances a RayJob that is in one JobDeploymentStatus. It
// changes s.job.Status in memory; Reconcile writes it afterwards. The result
// says when to look again.
type stateHandler func(ctx context.Context, s *scope) (ctrl.Result, error)

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

// handlerFor returns the handler of status; an unknown status (written by a
// newer operator, say) is only looked at again later.
func (r *Reconciler) handlerFor(status rayv1.JobDeploymentStatus) stateHandler {
	if h, ok := r.handlers[status]; ok {
		return h
	}
	return func(ctx context.Context, _ *scope) (ctrl.Result, error) {
		ctrl.LoggerFrom(ctx).Info("Unknown JobDeploymentStatus; waiting", "status", status)
		return ctrl.Result{RequeueAfter: defaultRequeue}, nil
	}
}

// requeue is the result of a handler that wants the default poll interval.
func requeue() (ctrl.Result, error) {
	return ctrl.Result{RequeueAfter: defaultRequeue}, nil
}

// reconcileValidationFailed keeps a RayJob whose spec was rejected where it
// is: ValidationFailed is final.
func reconcileValidationFailed(context.Context, *scope) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
