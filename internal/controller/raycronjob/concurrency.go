package raycronjob

import (
	"context"
	"fmt"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// concurrencyRule decides, under one concurrencyPolicy, whether a due run
// may start given the running RayJobs (s.jobs.active), and makes room for
// it; false skips the run.
type concurrencyRule func(r *Reconciler, ctx context.Context, s *scope) (bool, error)

// concurrencyRules maps each concurrencyPolicy to its rule; unset is Allow.
var concurrencyRules = map[rayv1.ConcurrencyPolicy]concurrencyRule{
	"":                      allowConcurrent,
	rayv1.AllowConcurrent:   allowConcurrent,
	rayv1.ForbidConcurrent:  forbidConcurrent,
	rayv1.ReplaceConcurrent: replaceConcurrent,
}

// admitRun applies the RayCronJob's concurrency policy to a due run.
func (r *Reconciler) admitRun(ctx context.Context, s *scope) (bool, error) {
	rule, ok := concurrencyRules[s.cj.Spec.ConcurrencyPolicy]
	if !ok {
		// Validation refuses other values; keep the run from happening anyway.
		return false, fmt.Errorf("unknown concurrencyPolicy %q", s.cj.Spec.ConcurrencyPolicy)
	}
	return rule(r, ctx, s)
}

// allowConcurrent starts every run (KubeRay's behaviour).
func allowConcurrent(*Reconciler, context.Context, *scope) (bool, error) {
	return true, nil
}

// forbidConcurrent skips the run while a RayJob runs.
func forbidConcurrent(_ *Reconciler, _ context.Context, s *scope) (bool, error) {
	return len(s.jobs.active) == 0, nil
}

// replaceConcurrent deletes the running RayJobs, then starts the run.
func replaceConcurrent(r *Reconciler, ctx context.Context, s *scope) (bool, error) {
	for _, job := range append([]*rayv1.RayJob(nil), s.jobs.active...) {
		if err := r.deleteRayJob(ctx, s, job, "concurrencyPolicy is Replace and a new run is due"); err != nil {
			return false, err
		}
	}
	return true, nil
}
