package rayservice

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// reconcileSuspend runs spec.suspend's state machine. Suspending is first
// only recorded; once that is written it deletes the clusters and Services
// of the RayService and runs to the end (Suspended) whatever spec.suspend
// becomes meanwhile. Resuming clears Suspended and starts over from
// Initializing.
func (r *Reconciler) reconcileSuspend(ctx context.Context, s *scope) (passsteps.Result, error) {
	now := metav1.Time{Time: s.now}
	persisted := s.original.Conditions
	var res passsteps.Result
	switch {
	case conditions.IsTrue(persisted, rayv1.RayServiceSuspending):
		wait, err := r.finishSuspending(ctx, s)
		if err != nil {
			return res, err
		}
		res = passsteps.Result{Stop: true, RequeueAfter: wait}
	case conditions.IsTrue(persisted, rayv1.RayServiceSuspended) && !s.rs.Spec.Suspend:
		resume(s.rs, now)
	case conditions.IsTrue(persisted, rayv1.RayServiceSuspended):
		res.Stop = true
	case s.rs.Spec.Suspend:
		requestSuspend(s.rs, now)
		res = passsteps.Result{Stop: true, RequeueAfter: r.opts.InFlightRequeue}
	}
	if res.Stop {
		// A pass that ends here never reaches calculateStatus, which records
		// the generation; without this, setting spec.suspend (a new
		// generation) would leave observedGeneration behind for as long as
		// the RayService stays suspended (KubeRay #4891).
		s.rs.Status.ObservedGeneration = s.rs.Generation
	}
	return res, nil
}

// requestSuspend records that a suspension starts and forgets the clusters.
func requestSuspend(rs *rayv1.RayService, now metav1.Time) {
	at := conditions.At(now, rs.Generation)
	conditions.MarkTrue(&rs.Status.Conditions, rayv1.RayServiceSuspending, rayv1.SuspendRequested, msgSuspendRequested, at)
	for _, t := range []rayv1.RayServiceConditionType{rayv1.RayServiceReady, rayv1.UpgradeInProgress, rayv1.RollbackInProgress} {
		conditions.MarkFalse(&rs.Status.Conditions, t, rayv1.SuspendInProgress, msgSuspendInProgress, at)
	}
	conditions.Remove(&rs.Status.Conditions, rayv1.ServeRequestsFailing)
	rs.Status.ActiveServiceStatus = rayv1.RayServiceStatus{}
	rs.Status.PendingServiceStatus = rayv1.RayServiceStatus{}
	rs.Status.NumServeEndpoints = 0
	rs.Status.ServiceStatus = rayv1.NotRunning
}

// resume clears Suspended and restarts Ready and UpgradeInProgress from
// Initializing, with a fresh transition time (the initializing timeout
// counts from it).
func resume(rs *rayv1.RayService, now metav1.Time) {
	at := conditions.At(now, rs.Generation)
	conditions.MarkFalse(&rs.Status.Conditions, rayv1.RayServiceSuspended, rayv1.RayServiceResumed, msgResumed, at)
	for _, t := range []rayv1.RayServiceConditionType{rayv1.RayServiceReady, rayv1.UpgradeInProgress} {
		conditions.Remove(&rs.Status.Conditions, t)
		conditions.MarkFalse(&rs.Status.Conditions, t, rayv1.RayServiceInitializing, msgInitializing, at)
	}
	rs.Status.ObservedGeneration = rs.Generation
}

// finishSuspending deletes what is left and, once nothing is, marks the
// RayService Suspended. It returns how soon to look again (0: no need).
func (r *Reconciler) finishSuspending(ctx context.Context, s *scope) (time.Duration, error) {
	now := metav1.Time{Time: s.now}
	remaining, err := r.deleteOwnedObjects(ctx, s)
	if err != nil {
		return 0, err
	}
	if remaining > 0 {
		conditions.MarkTrue(&s.rs.Status.Conditions, rayv1.RayServiceSuspending, rayv1.SuspendInProgress, msgSuspendInProgress, conditions.At(now, s.rs.Generation))
		return r.opts.InFlightRequeue, nil
	}
	conditions.MarkFalse(&s.rs.Status.Conditions, rayv1.RayServiceSuspending, rayv1.SuspendComplete, msgSuspendComplete, conditions.At(now, s.rs.Generation))
	conditions.MarkTrue(&s.rs.Status.Conditions, rayv1.RayServiceSuspended, rayv1.SuspendComplete, msgSuspendComplete, conditions.At(now, s.rs.Generation))
	for _, t := range []rayv1.RayServiceConditionType{rayv1.RayServiceReady, rayv1.UpgradeInProgress, rayv1.RollbackInProgress} {
		conditions.MarkFalse(&s.rs.Status.Conditions, t, rayv1.SuspendComplete, msgSuspendComplete, conditions.At(now, s.rs.Generation))
	}
	if !s.rs.Spec.Suspend {
		// spec.suspend was turned off while suspending. Nothing else will
		// bring the pass that resumes: this status write does not pass the
		// RayService's event filter, and the owned objects are all gone.
		return r.opts.InFlightRequeue, nil
	}
	return 0, nil
}

// deleteOwnedObjects deletes the RayService's clusters and Services (and,
// with incremental upgrades, its Gateway and HTTPRoute) and counts those
// that still exist, terminating ones included.
func (r *Reconciler) deleteOwnedObjects(ctx context.Context, s *scope) (int, error) {
	clusters, err := r.clusters.List(ctx, s.rs, rayv1.KindRayService)
	if err != nil {
		return 0, err
	}
	remaining := len(clusters)
	for i := range clusters {
		if _, err := r.clusters.Delete(ctx, s.rs, client.ObjectKeyFromObject(&clusters[i])); err != nil {
			return 0, err
		}
	}
	services := &corev1.ServiceList{}
	if err := r.Client.List(ctx, services, client.InNamespace(s.rs.Namespace), clusterowner.OwnedBy(s.rs, rayv1.KindRayService)); err != nil {
		return 0, fmt.Errorf("listing the Services of the RayService: %w", err)
	}
	remaining += len(services.Items)
	for i := range services.Items {
		if err := r.deleteService(ctx, s.rs, &services.Items[i]); err != nil {
			return 0, err
		}
	}
	n, err := r.deleteGatewayObjects(ctx, s)
	return remaining + n, err
}

// deleteService deletes one of the RayService's Services.
func (r *Reconciler) deleteService(ctx context.Context, rs *rayv1.RayService, svc *corev1.Service) error {
	if !svc.DeletionTimestamp.IsZero() {
		return nil
	}
	return r.Children().Delete(ctx, rs, svc, clusterowner.ServiceEvent(childwrite.Delete, svc), childwrite.NotFoundAsDeleted())
}
