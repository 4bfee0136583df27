package raycronjob

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/statuswrite"
)

// orderedSteps are the stages of a pass. Observing the RayJobs comes first
// so that status.active stays true even for an invalid or suspended
// RayCronJob; validation comes before anything is changed.
func (r *Reconciler) orderedSteps() []passsteps.Step[*scope] {
	return []passsteps.Step[*scope]{
		{Name: "Observe", Run: r.observe},
		{Name: "Validate", Run: r.validate},
		{Name: "PruneHistory", Run: r.pruneHistory},
		{Name: "Suspend", Run: r.suspend},
		{Name: "Schedule", Run: r.reconcileSchedule},
	}
}

// finishPass derives status.active from the RayJobs as the pass left them,
// writes the status once when it changed as a whole, and decides when to
// look again: when the steps asked (the next schedule time), or
// errorRequeue after a failure.
func (r *Reconciler) finishPass(ctx context.Context, s *scope, res passsteps.Result, passErr error) (ctrl.Result, error) {
	if s.jobs != nil {
		s.cj.Status.Active = activeRefs(s.jobs.active)
	}
	if !equality.Semantic.DeepEqual(s.original, &s.cj.Status) {
		if err := statuswrite.Write(ctx, r.Client, s.cj, s.original, &s.cj.Status); err != nil && passErr == nil {
			passErr = fmt.Errorf("updating the status: %w", err)
		}
	}
	if passErr != nil {
		return r.failed(ctx, passErr)
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
}
