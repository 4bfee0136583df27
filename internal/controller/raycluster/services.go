package raycluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/rayservices"
)

var serviceEvents = childEvents{"service", reasonCreatedService, reasonFailedToCreateService}

// headServices lists the Services labelled as the cluster's head Service.
// As listPods, it returns the cache's own Services: nothing may change them.
func (r *Reconciler) headServices(ctx context.Context, cluster *rayv1.RayCluster) ([]corev1.Service, error) {
	var list corev1.ServiceList
	err := r.Client.List(ctx, &list, client.InNamespace(cluster.Namespace), client.MatchingFields{clusterindex.Services: cluster.Name},
		client.MatchingLabels(rayservices.HeadServiceLabels(cluster)), client.UnsafeDisableDeepCopy)
	return list.Items, err
}

// reconcileHeadService makes sure exactly one head Service exists. A second
// one (made by hand with the same labels) is an error rather than a guess
// at which one workers should use. A missing one is created with the
// pass's first Pod creates (the head Pod of a new cluster), or at the end
// of the pass: a new cluster's first pass waits for one round trip fewer.
func (r *Reconciler) reconcileHeadService(ctx context.Context, s *scope) (passsteps.Result, error) {
	services, err := r.headServices(ctx, s.cluster)
	if err != nil {
		return passsteps.Result{}, err
	}
	switch len(services) {
	case 0:
	case 1:
		return passsteps.Result{}, nil
	default:
		return passsteps.Result{}, fmt.Errorf("%d head services found %v; a RayCluster must have exactly one", len(services), serviceNames(services))
	}
	svc := rayservices.BuildHeadService(s.cluster, rayservices.HeadServiceOptions{ClusterIP: r.opts.HeadServiceClusterIP})
	if len(svc.Spec.Ports) == 0 {
		return passsteps.Result{}, fmt.Errorf("ray head service does not have any ports set up. Service specification: %v", svc.Spec)
	}
	s.holdCreate(svc, serviceEvents, func() { s.createdHeadService = svc })
	return passsteps.Result{}, nil
}

// reconcileHeadlessService creates the headless Service that gives the Pods
// of multi-host worker groups stable DNS names.
func (r *Reconciler) reconcileHeadlessService(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !rayservices.NeedsHeadlessService(s.cluster) {
		return passsteps.Result{}, nil
	}
	return passsteps.Result{}, r.ensureExists(ctx, s, rayservices.BuildHeadlessService(s.cluster), serviceEvents)
}

// reconcileServeService creates the Ray Serve Service of a cluster annotated
// ray.io/enable-serve-service: "true".
func (r *Reconciler) reconcileServeService(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !rayservices.ServeServiceEnabled(s.cluster) {
		return passsteps.Result{}, nil
	}
	svc, err := rayservices.BuildServeService(s.cluster)
	if err != nil {
		return passsteps.Result{}, err
	}
	return passsteps.Result{}, r.ensureExists(ctx, s, svc, serviceEvents)
}

func serviceNames(services []corev1.Service) []string {
	names := make([]string, len(services))
	for i := range services {
		names[i] = services[i].Name
	}
	return names
}
