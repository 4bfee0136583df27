package rayservice

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// step is one named stage of a pass.
type step struct {
	name string
	run  func(ctx context.Context, s *scope) error
}

// orderedSteps are the stages of a pass, in KubeRay's order.
func (r *Reconciler) orderedSteps() []step {
	return []step{
		{"CleanUpClusters", r.cleanUpClusters},
		{"Suspend", r.reconcileSuspend},
		{"InitializingTimeout", r.stopIfTimedOut},
		{"Clusters", r.reconcileClusters},
		{"ServeLabels", r.reconcileServeLabels},
		{"Serve", r.reconcileServe},
		{"TrafficObjects", r.reconcileTrafficObjects},
		{"Services", r.reconcileServices},
		{"Status", r.calculateStatus},
	}
}

// runSteps runs the steps in order; it stops at the first error or at a
// step that ends the pass.
func (r *Reconciler) runSteps(ctx context.Context, s *scope) error {
	for _, st := range r.orderedSteps() {
		if err := st.run(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		if s.stop {
			return nil
		}
	}
	return nil
}

// finishPass writes the status once when it changed and decides when to
// look again. Changes of the embedded RayCluster statuses alone are not
// written (as KubeRay): they change often and say nothing new about the
// RayService; they are written with the next real change.
func (r *Reconciler) finishPass(ctx context.Context, s *scope, passErr error) (ctrl.Result, error) {
	if statusChanged(s.original, &s.rs.Status) {
		s.rs.Status.LastUpdateTime = &metav1.Time{Time: s.now}
		if err := r.Client.Status().Update(ctx, s.rs); err != nil {
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
	return ctrl.Result{RequeueAfter: s.requeue}, nil
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
