package rayservice

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/statuswrite"
)

// orderedSteps are the stages of a pass, in KubeRay's order.
func (r *Reconciler) orderedSteps() []passsteps.Step[*scope] {
	return []passsteps.Step[*scope]{
		{Name: "Finalizer", Run: r.ensureFinalizerStep},
		{Name: "CleanUpClusters", Run: r.cleanUpClusters},
		{Name: "Suspend", Run: r.reconcileSuspend},
		{Name: "InitializingTimeout", Run: r.stopIfTimedOut},
		{Name: "Clusters", Run: r.reconcileClusters},
		{Name: "ServeLabels", Run: r.reconcileServeLabels},
		{Name: "Serve", Run: r.reconcileServe},
		{Name: "TrafficObjects", Run: r.reconcileTrafficObjects},
		{Name: "Services", Run: r.reconcileServices},
	}
}

// finishPass computes the status after a pass whose steps all ran (one
// that stopped or failed keeps what its steps set), writes it once when it
// changed and decides when to look again: when the steps or the status
// asked. Changes of the embedded RayCluster statuses alone are not written
// (as KubeRay): they change often and say nothing new about the
// RayService; they are written with the next real change.
func (r *Reconciler) finishPass(ctx context.Context, s *scope, res passsteps.Result, passErr error) (ctrl.Result, error) {
	if passErr == nil && !res.Stop {
		statusRes, err := r.calculateStatus(ctx, s)
		res, passErr = res.Merge(statusRes), err
	}
	if statusChanged(s.original, &s.rs.Status) {
		s.rs.Status.LastUpdateTime = &metav1.Time{Time: s.now}
		if err := statuswrite.Write(ctx, r.Client, s.rs, s.original, &s.rs.Status); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: r.opts.InFlightRequeue}, passErr
			}
			if passErr == nil {
				passErr = fmt.Errorf("updating the status: %w", err)
			}
		}
	}
	if passErr != nil {
		return ctrl.Result{}, passErr
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
}

// statusChanged compares two statuses as a whole, leaving out
// lastUpdateTime and the embedded RayCluster statuses.
func statusChanged(a, b *rayv1.RayServiceStatuses) bool {
	return !equality.Semantic.DeepEqual(comparable(a), comparable(b))
}

func comparable(st *rayv1.RayServiceStatuses) *rayv1.RayServiceStatuses {
	c := st.DeepCopy()
	c.LastUpdateTime = nil
	c.ActiveServiceStatus.RayClusterStatus = rayv1.RayClusterStatus{}
	c.PendingServiceStatus.RayClusterStatus = rayv1.RayClusterStatus{}
	return c
}
