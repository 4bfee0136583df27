package raycronjob

import (
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/ownerenqueue"
)

// ControllerName names the controller in logs and is the reporting
// controller of its events.
const ControllerName = "raycronjob-controller"

// NewForManager returns a Reconciler using mgr's client, its uncached API
// reader and an event recorder named ControllerName; fields of deps already
// set win.
func NewForManager(mgr ctrl.Manager, deps Deps, opts Options) *Reconciler {
	deps.FillFrom(mgr, ControllerName)
	return New(deps, opts)
}

// SetupWithManager watches RayCronJobs (spec changes, not the controller's
// own status writes) and the RayJobs they own (created, deleted, or moved
// to another deployment status: what status.active, the history and
// Forbid depend on). Requeues for the next schedule time wait on the
// controller's clock, so an injected clock drives the whole schedule.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("raycronjob").
		For(&rayv1.RayCronJob{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&rayv1.RayJob{}, ownerenqueue.Handler(rayv1.GroupVersion.WithKind(rayv1.KindRayCronJob)), builder.WithPredicates(rayJobLifecycle())).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1), NewQueue: r.newQueue}).
		Complete(r)
}

// newQueue is controller-runtime's rate-limited work queue on r.Clock.
func (r *Reconciler) newQueue(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{
		Name: name, Clock: r.Clock,
	})
}

// rayJobLifecycle passes RayJob creations, deletions, and updates that
// change the deployment status or start the deletion.
func rayJobLifecycle() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldJob, okOld := e.ObjectOld.(*rayv1.RayJob)
			newJob, okNew := e.ObjectNew.(*rayv1.RayJob)
			if !okOld || !okNew {
				return true
			}
			return oldJob.Status.JobDeploymentStatus != newJob.Status.JobDeploymentStatus ||
				oldJob.DeletionTimestamp.IsZero() != newJob.DeletionTimestamp.IsZero()
		},
	}
}
