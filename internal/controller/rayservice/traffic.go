package rayservice

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/rayservices"
)

// reconcileTrafficObjects keeps, for an incremental upgrade, what splits
// traffic between the clusters: a serve Service per cluster (owned by the
// cluster, created once), the RayService's Gateway and, once there is an
// active cluster, the HTTPRoute whose weights move step by step towards
// the cluster gaining traffic.
func (r *Reconciler) reconcileTrafficObjects(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !r.incrementalEnabled(s.rs) {
		return passsteps.Result{}, nil
	}
	opts, err := incrementalupgrade.OptionsOf(&s.rs.Spec)
	if err != nil {
		return passsteps.Result{}, err
	}
	for _, c := range []*rayv1.RayCluster{s.active, s.pending} {
		if c != nil {
			if err := r.ensurePerClusterServeService(ctx, s.rs, c); err != nil {
				return passsteps.Result{}, err
			}
		}
	}
	if err := r.loadTrafficObjects(ctx, s); err != nil {
		return passsteps.Result{}, err
	}
	// The HTTPRoute is where traffic goes; the status only records it. An
	// operator killed between moving the route and writing the status
	// finds the status a step behind, and the next step computed from it
	// would move traffic back: the status first takes the route's weights.
	r.trafficStatus(s)
	if err := r.applyGateway(ctx, s, incrementalupgrade.Gateway(s.rs, opts)); err != nil {
		return passsteps.Result{}, err
	}
	if s.active == nil {
		return passsteps.Result{}, nil
	}
	route, wait := r.desiredRoute(s, opts)
	return passsteps.Requeue(wait), r.applyRoute(ctx, s, route)
}

// ensurePerClusterServeService creates a cluster's own serve Service, the
// HTTPRoute's backend for that cluster. It is never updated.
func (r *Reconciler) ensurePerClusterServeService(ctx context.Context, rs *rayv1.RayService, c *rayv1.RayCluster) error {
	svc, err := rayservices.BuildPerClusterServeService(rs, c)
	if err != nil {
		return fmt.Errorf("building the serve Service of RayCluster %s: %w", c.Name, err)
	}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{}); !apierrors.IsNotFound(err) {
		return err
	}
	return r.Children().Create(ctx, rs, svc, clusterowner.ServiceEvent(childwrite.Create, svc), childwrite.AlreadyExistsAsCreated())
}

// loadTrafficObjects reads the RayService's Gateway and HTTPRoute once per
// pass, from the API server: they are neither watched nor cached, so that
// the operator holds no informer on every Gateway of the cluster.
func (r *Reconciler) loadTrafficObjects(ctx context.Context, s *scope) error {
	if s.trafficLoaded {
		return nil
	}
	gw, route := &gwv1.Gateway{}, &gwv1.HTTPRoute{}
	if err := r.getTrafficObject(ctx, s.rs, incrementalupgrade.GatewayName(s.rs.Name), gw); err != nil {
		return err
	}
	if err := r.getTrafficObject(ctx, s.rs, incrementalupgrade.HTTPRouteName(s.rs.Name), route); err != nil {
		return err
	}
	s.gateway, s.route = nilIfUnnamed(gw), nilIfUnnamed(route)
	s.trafficLoaded = true
	return nil
}

// getTrafficObject reads a Gateway API object; a missing object leaves obj
// empty. Missing Gateway API CRDs are reported as such.
func (r *Reconciler) getTrafficObject(ctx context.Context, rs *rayv1.RayService, name string, obj client.Object) error {
	err := r.LiveReader.Get(ctx, client.ObjectKey{Namespace: rs.Namespace, Name: name}, obj)
	switch {
	case err == nil || apierrors.IsNotFound(err):
		return nil
	case meta.IsNoMatchError(err) || runtime.IsNotRegisteredError(err):
		return fmt.Errorf("incremental upgrades need the Gateway API (gateway.networking.k8s.io/v1) installed in the cluster: %w", err)
	}
	return fmt.Errorf("reading %s: %w", name, err)
}

func nilIfUnnamed[T client.Object](obj T) T {
	var zero T
	if obj.GetName() == "" {
		return zero
	}
	return obj
}

// applyGateway creates the Gateway, or updates its class and listeners when
// they differ.
func (r *Reconciler) applyGateway(ctx context.Context, s *scope, desired *gwv1.Gateway) error {
	return applyTrafficObject(ctx, r, s, &s.gateway, desired, gatewayKind)
}

// gatewayKind is how applyTrafficObject compares, updates and names a Gateway.
var gatewayKind = trafficKind[*gwv1.Gateway]{
	trafficWords: trafficWords{
		noun: "Gateway", failedCreateNoun: "Gateway",
		created: reasonCreatedGateway, failedToCreate: reasonFailedToCreateGateway,
		updated: reasonUpdatedGateway, failedToUpdate: reasonFailedToUpdateGateway,
	},
	differs: incrementalupgrade.GatewayDiffers,
	copySpec: func(current, desired *gwv1.Gateway) {
		current.Spec.GatewayClassName, current.Spec.Listeners = desired.Spec.GatewayClassName, desired.Spec.Listeners
	},
}

// desiredRoute is the HTTPRoute for this pass: the active cluster's serve
// Service and, while there is one, the pending cluster's, with the weights
// of the next traffic step; and how soon that step is due (0: none is).
func (r *Reconciler) desiredRoute(s *scope, opts incrementalupgrade.Options) (*gwv1.HTTPRoute, time.Duration) {
	u := upgradeState(s)
	w := incrementalupgrade.Weights{Active: ptrOr(u.Active.TrafficRoutedPercent, 100)}
	var wait time.Duration
	if s.pending != nil {
		w, wait = incrementalupgrade.NextWeights(u, opts, s.pendingReady, s.now)
	}
	backends := []incrementalupgrade.Backend{backendOf(s.active, w.Active)}
	if s.pending != nil {
		backends = append(backends, backendOf(s.pending, w.Pending))
	}
	return incrementalupgrade.HTTPRoute(s.rs, backends), wait
}

func backendOf(c *rayv1.RayCluster, weight int32) incrementalupgrade.Backend {
	return incrementalupgrade.Backend{Service: naming.ServeServiceName(c.Name), Port: rayv1.ServePort(&c.Spec), Weight: weight}
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// applyRoute creates the HTTPRoute or updates its parents, match and
// weighted backends when they differ.
func (r *Reconciler) applyRoute(ctx context.Context, s *scope, desired *gwv1.HTTPRoute) error {
	return applyTrafficObject(ctx, r, s, &s.route, desired, routeKind)
}

// routeKind is how applyTrafficObject compares, updates and names an
// HTTPRoute.
var routeKind = trafficKind[*gwv1.HTTPRoute]{
	trafficWords: trafficWords{
		noun: "HTTPRoute", failedCreateNoun: "the HTTPRoute",
		created: reasonCreatedHTTPRoute, failedToCreate: reasonFailedToCreateHTTPRoute,
		updated: reasonUpdatedHTTPRoute, failedToUpdate: reasonFailedToUpdateHTTPRoute,
	},
	differs: incrementalupgrade.RouteDiffers,
	copySpec: func(current, desired *gwv1.HTTPRoute) {
		current.Spec.ParentRefs, current.Spec.Rules = desired.Spec.ParentRefs, desired.Spec.Rules
	},
}

// trafficKind is how applyTrafficObject treats one Gateway API kind: how it
// tells that an object differs from the desired one, what of the desired
// one it copies onto it, and the words of its events and errors.
type trafficKind[P client.Object] struct {
	trafficWords
	differs  func(current, desired P) bool
	copySpec func(current, desired P)
}

// trafficWords are the event reasons of one Gateway API kind and the nouns
// its events and errors name it with.
type trafficWords struct {
	// noun names the kind in errors and in most events ("Gateway").
	noun string
	// failedCreateNoun names it in the event of a failed create, which
	// KubeRay words differently per kind ("Gateway", "the HTTPRoute").
	failedCreateNoun string
	// The event reasons of a create and an update, done or failed.
	created, failedToCreate, updated, failedToUpdate string
}

// applyTrafficObject creates desired, owned by the RayService, when *current
// is nil and then records it there; otherwise it updates *current to desired
// when they differ. Both record KubeRay's events on the RayService.
func applyTrafficObject[O any, P interface {
	*O
	client.Object
}](ctx context.Context, r *Reconciler, s *scope, current *P, desired P, k trafficKind[P]) error {
	if *current == nil {
		if err := r.createTrafficObject(ctx, s.rs, desired, k.trafficWords); err != nil {
			return err
		}
		*current = desired
		return nil
	}
	if !k.differs(*current, desired) {
		return nil
	}
	k.copySpec(*current, desired)
	return r.updateTrafficObject(ctx, s.rs, *current, k.trafficWords)
}

// createTrafficObject creates a Gateway API object owned by the RayService.
func (r *Reconciler) createTrafficObject(ctx context.Context, rs *rayv1.RayService, obj client.Object, w trafficWords) error {
	obj.SetOwnerReferences([]metav1.OwnerReference{clusterowner.ControllerRef(rs, rayv1.KindRayService)})
	forRS := " for RayService " + obj.GetNamespace() + "/" + obj.GetName()
	return r.Children().Create(ctx, rs, obj, childwrite.Event{
		Reason: w.created, Note: "Created " + w.noun + forRS,
		FailedReason: w.failedToCreate, FailedNote: "Failed to create " + w.failedCreateNoun + forRS,
	})
}

// updateTrafficObject writes a Gateway API object whose spec was changed.
func (r *Reconciler) updateTrafficObject(ctx context.Context, rs *rayv1.RayService, obj client.Object, w trafficWords) error {
	return r.Children().Update(ctx, rs, obj, childwrite.Noted(childwrite.Update, childwrite.Noun("the "+w.noun, obj), w.updated, w.failedToUpdate))
}

// deleteGatewayObjects deletes the HTTPRoute and the Gateway of a
// suspending RayService and counts those that still exist.
func (r *Reconciler) deleteGatewayObjects(ctx context.Context, s *scope) (int, error) {
	if !r.incrementalEnabled(s.rs) {
		return 0, nil
	}
	remaining := 0
	for _, obj := range []client.Object{
		&gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: s.rs.Namespace, Name: incrementalupgrade.HTTPRouteName(s.rs.Name)}},
		&gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: s.rs.Namespace, Name: incrementalupgrade.GatewayName(s.rs.Name)}},
	} {
		exists, err := r.deleteTrafficObject(ctx, s.rs, obj)
		if err != nil {
			return 0, err
		}
		if exists {
			remaining++
		}
	}
	return remaining, nil
}

// deleteTrafficObject deletes a Gateway or HTTPRoute unless it is gone or
// going, and reports whether it still existed. Without the Gateway API in
// the cluster there is nothing to delete.
func (r *Reconciler) deleteTrafficObject(ctx context.Context, rs *rayv1.RayService, obj client.Object) (bool, error) {
	kind := "Gateway"
	if _, ok := obj.(*gwv1.HTTPRoute); ok {
		kind = "HTTPRoute"
	}
	err := r.LiveReader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || runtime.IsNotRegisteredError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %s %s: %w", kind, obj.GetName(), err)
	case !obj.GetDeletionTimestamp().IsZero():
		return true, nil
	}
	err = r.Children().Delete(ctx, rs, obj, childwrite.Noted(childwrite.Delete, childwrite.Noun("the "+kind, obj), "Deleted"+kind, "FailedToDelete"+kind),
		childwrite.NotFoundAsDeleted())
	return err == nil, err
}
