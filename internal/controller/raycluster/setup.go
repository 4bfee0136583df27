package raycluster

import (
	"context"

	routev1 "github.com/openshift/api/route/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/ownerenqueue"
)

// ControllerName names the controller in logs and is the reporting
// controller of its events.
const ControllerName = "raycluster-controller"

// NewForManager returns a Reconciler using mgr's client, its uncached API
// reader and an event recorder named ControllerName; fields of deps already
// set win.
func NewForManager(mgr ctrl.Manager, deps Deps, opts Options) *Reconciler {
	deps.FillFrom(mgr, ControllerName)
	return New(deps, opts)
}

// SetupWithManager watches RayClusters and everything they own, and adds
// the reconciler to mgr. With the RayClusterNetworkPolicy gate off it adds,
// instead of the NetworkPolicy watch, the start-up sweep that removes the
// NetworkPolicies a run with the gate on left. RayCluster events pass only when the spec,
// labels or annotations change: the controller's own status writes must
// not trigger passes (it requeues itself after a status change).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("raycluster").
		For(&rayv1.RayCluster{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{},
			predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{},
		)))
	// Pod and Service events come by the tens of thousands at scale:
	// ownerenqueue maps them to their RayCluster without controller-runtime's
	// REST mapper look-up per event.
	b = ownerenqueue.Owns(b, rayv1.GroupVersion.WithKind(rayv1.KindRayCluster),
		&corev1.Pod{}, &corev1.Service{}, &batchv1.Job{}, &corev1.ServiceAccount{}, &rbacv1.Role{},
		&rbacv1.RoleBinding{}, &networkingv1.Ingress{}, &corev1.Secret{}, &corev1.PersistentVolumeClaim{})
	// The idle check's probe reports on this channel after each look; its
	// goroutines end with the manager.
	b = b.WatchesRawSource(source.Channel(r.idleEvents, &handler.EnqueueRequestForObject{}))
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		r.activity.StopAll()
		return nil
	})); err != nil {
		return err
	}
	if r.opts.UseRoute {
		b = b.Owns(&routev1.Route{})
	}
	if r.opts.Features.Enabled(features.RayClusterMTLS) {
		b = r.watchMTLS(mgr, b)
	}
	if r.opts.Features.Enabled(features.RayClusterNetworkPolicy) {
		b = b.Owns(&networkingv1.NetworkPolicy{})
	} else if err := mgr.Add(r.networkPolicySweep(mgr)); err != nil {
		return err
	}
	if c, ok := r.opts.BatchSchedulerFactory.(batchscheduler.ReconcilerConfigurer); ok {
		b = c.ConfigureReconciler(b)
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).Complete(r)
}
