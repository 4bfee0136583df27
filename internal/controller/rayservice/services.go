package rayservice

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/rayservices"
)

// reconcileServices points the RayService's head Service ("<rs>-head-svc")
// and serve Service ("<rs>-serve-svc" or spec.serveService) at the cluster
// that should take traffic: the pending cluster once all its applications
// run (blue/green), else the active one. Nothing is done before a cluster is
// ready. A Service that moves keeps its ClusterIP. With an incremental
// upgrade the per-cluster serve Services carry traffic instead (see
// incremental.go).
func (r *Reconciler) reconcileServices(ctx context.Context, s *scope) (passsteps.Result, error) {
	target := r.serviceTarget(s)
	if target == nil {
		return passsteps.Result{}, nil
	}
	opts := rayservices.HeadServiceOptions{ClusterIP: r.opts.HeadServiceClusterIP}
	head, err := r.clusters.ApplyService(ctx, s.rs, clusterowner.OwnerHeadService(s.rs, rayv1.KindRayService, target, opts))
	if err != nil {
		return passsteps.Result{}, err
	}
	s.servingCluster = clusterowner.SelectedCluster(head)
	if r.incrementalEnabled(s.rs) {
		return passsteps.Result{}, nil
	}
	serve, err := rayservices.BuildRayServiceServeService(s.rs, target)
	if err != nil {
		r.events.Eventf(s.rs, nil, corev1.EventTypeWarning, clusterowner.ReasonFailedToCreateService, clusterowner.ActionCreate,
			"Failed to build the serve service of RayCluster %s: %v", target.Name, err)
		return passsteps.Result{}, err
	}
	serve.OwnerReferences = []metav1.OwnerReference{clusterowner.ControllerRef(s.rs, rayv1.KindRayService)}
	if serve, err = r.clusters.ApplyService(ctx, s.rs, serve); err != nil {
		return passsteps.Result{}, err
	}
	if got := clusterowner.SelectedCluster(serve); got != s.servingCluster {
		return passsteps.Result{}, fmt.Errorf("the head Service selects RayCluster %q but the serve Service %q", s.servingCluster, got)
	}
	return passsteps.Result{}, nil
}

// serviceTarget is the cluster the Services should select, or nil while no
// cluster is ready.
func (r *Reconciler) serviceTarget(s *scope) *rayv1.RayCluster {
	switch {
	case !s.activeReady && !s.pendingReady:
		return nil
	case s.pendingReady && !r.incrementalInProgress(s):
		return s.pending
	default:
		return s.active
	}
}

// servingCluster is the cluster the RayService's head Service selects now,
// "" when it has none.
func (r *Reconciler) servingCluster(ctx context.Context, rs *rayv1.RayService) (string, error) {
	svc := &corev1.Service{}
	key := client.ObjectKey{Namespace: rs.Namespace, Name: naming.OwnerHeadServiceName(rs.Name)}
	if err := r.Client.Get(ctx, key, svc); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return clusterowner.SelectedCluster(svc), nil
}

// serveServiceName is the name of the serve Service of rs (not in
// incremental mode).
func serveServiceName(rs *rayv1.RayService) string {
	if custom := rs.Spec.ServeService; custom != nil && custom.Name != "" {
		return custom.Name
	}
	return naming.ServeServiceName(rs.Name)
}
