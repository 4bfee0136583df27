package rayjobchaos_test

import (
	"testing"

	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// TestPlans: a seed always draws the same lifecycles, and every RayJob
// they create passes the operator's validation (a plan the operator
// refuses would end in ValidationFailed, not in its script's state). No API
// server needed.
func TestPlans(t *testing.T) {
	gate := features.NewGate()
	for seed := range uint64(3) {
		for i := range 500 {
			lc := newLifecycle(seed, i)
			if again := newLifecycle(seed, i); again.String() != lc.String() {
				t.Fatalf("seed %d lifecycle %d drawn twice differs:\n%v\n%v", seed, i, lc, again)
			}
			job := lc.rayJob("ns")
			if err := validation.RayJobMetadata(job.ObjectMeta); err != nil {
				t.Errorf("%v: %v", lc, err)
			}
			if err := validation.RayJobSpec(&job.Spec, job.Annotations, gate); err != nil {
				t.Errorf("%v: %v", lc, err)
			}
			if exp := lc.expect(); !lc.deleteEarly && (len(exp.jobStatuses) == 0 || len(exp.reasons) == 0) {
				t.Errorf("%v: no expectation", lc)
			}
		}
	}
}
