package raycronjob

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
)

// step is one named stage of a pass.
type step struct {
	name string
	run  func(ctx context.Context, s *scope) error
}

// orderedSteps are the stages of a pass. Observing the RayJobs comes first
// so that status.active stays true even for an invalid or suspended
// RayCronJob; validation comes before anything is changed.
func (r *Reconciler) orderedSteps() []step {
	return []step{
		{"Observe", r.observe},
		{"Validate", r.validate},
		{"PruneHistory", r.pruneHistory},
		{"Suspend", r.suspend},
		{"Schedule", r.reconcileSchedule},
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

// finishPass derives status.active from the RayJobs as the pass left them, writes the status once when it changed as a
// whole, and decides when to look again: at the next schedule time, or
// errorRequeue after a failure.
func (r *Reconciler) finishPass(ctx context.Context, s *scope, passErr error) (ctrl.Result, error) {
	if s.jobs != nil {
		s.cj.Status.Active = activeRefs(s.jobs.active)
	}
	if !equality.Semantic.DeepEqual(s.original, &s.cj.Status) {
		if err := r.Client.Status().Update(ctx, s.cj); err != nil && passErr == nil {
			passErr = fmt.Errorf("updating the status: %w", err)
		}
	}
	if passErr != nil {
		return r.failed(ctx, passErr)
	}
	return ctrl.Result{RequeueAfter: s.requeue}, nil
}
