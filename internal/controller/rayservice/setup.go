package rayservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/ownerenqueue"
)

// ControllerName names the controller in logs and is the reporting
// controller of its events.
const ControllerName = "rayservice-controller"

// NewForManager returns a Reconciler using mgr's client, its uncached API
// reader and an event recorder named ControllerName; fields of deps already
// set win.
func NewForManager(mgr ctrl.Manager, deps Deps, opts Options) *Reconciler {
	deps.FillFrom(mgr, ControllerName)
	return New(deps, opts)
}

// SetupWithManager watches what a RayService's state depends on, so that it
// is event-driven rather than polled: the RayService (spec, labels and
// annotations; not its own status writes), the clusters and Services it
// owns, the EndpointSlices of its serve Services and the head Pods of its
// clusters.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("rayservice").
		For(&rayv1.RayService{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{},
			predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{},
		)))
	return ownerenqueue.Owns(b, rayv1.GroupVersion.WithKind(rayv1.KindRayService), &rayv1.RayCluster{}, &corev1.Service{}).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(r.rayServiceOfLabels)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.rayServiceOfHeadPod)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Complete(r)
}

// rayServiceOfLabels maps an object labelled by a RayService (an
// EndpointSlice mirrors its Service's labels) to that RayService. Objects
// of a per-cluster serve Service name the cluster; it names the RayService.
func (r *Reconciler) rayServiceOfLabels(ctx context.Context, obj client.Object) []reconcile.Request {
	labels := obj.GetLabels()
	if labels[rayv1.LabelOriginatedFromCRD] != rayv1.KindRayService || labels[rayv1.LabelOriginatedFromCRName] == "" {
		return nil
	}
	name := labels[rayv1.LabelOriginatedFromCRName]
	cluster := &rayv1.RayCluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, cluster, client.UnsafeDisableDeepCopy); err == nil &&
		cluster.Labels[rayv1.LabelOriginatedFromCRD] == rayv1.KindRayService {
		name = cluster.Labels[rayv1.LabelOriginatedFromCRName]
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// rayServiceOfHeadPod maps the head Pod of a RayService's cluster to the
// RayService.
func (r *Reconciler) rayServiceOfHeadPod(ctx context.Context, obj client.Object) []reconcile.Request {
	labels := obj.GetLabels()
	if labels[rayv1.LabelNodeType] != string(rayv1.HeadNode) || labels[rayv1.LabelCluster] == "" {
		return nil
	}
	// Only the cluster's labels are read: the cache's own object, not a
	// copy (every head Pod event of every RayCluster comes here, a RayService's
	// or not).
	cluster := &rayv1.RayCluster{}
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: labels[rayv1.LabelCluster]}
	if err := r.Client.Get(ctx, key, cluster, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	return r.rayServiceOfLabels(ctx, cluster)
}
