package raycronjob

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// suspend ends the pass of a suspended RayCronJob with KubeRay's event:
// no RayJob is created and there is no requeue; resuming (a spec change)
// brings the next pass, which catches up the times missed meanwhile (all of
// them, as KubeRay, up to MaxMissedTicks; see planTicks). The RayJobs
// already created are still followed and pruned by the earlier steps.
func (r *Reconciler) suspend(_ context.Context, s *scope) (passsteps.Result, error) {
	if !s.cj.Spec.Suspend {
		return passsteps.Result{}, nil
	}
	r.events.Eventf(s.cj, nil, corev1.EventTypeNormal, reasonSuspended, actionSuspend, "RayCronJob suspended, no new RayJobs will be created")
	return passsteps.Result{Stop: true}, nil
}
