package rayjobchaos_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
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

// TestKillScheduleLetsTheOperatorAct: every longLivedEvery-th incarnation
// lives at least progressPeriod, the others less than longestShortLife, so
// that no stretch without a long-lived one exceeds longestProgressGap, and
// a user waits long enough for that stretch and the operator's own longest
// wait. No API server needed.
func TestKillScheduleLetsTheOperatorAct(t *testing.T) {
	op := &chaosOperator{rng: rand.New(rand.NewPCG(1, 2))}
	stretch := time.Duration(0)
	for n := 1; n <= 1000; n++ {
		life := op.lifetime(n)
		stretch += life + restartPause
		switch long := n%longLivedEvery == 0; {
		case long && (life < progressPeriod || stretch > longestProgressGap):
			t.Fatalf("long-lived incarnation %d lives %v after a stretch of %v; want at least %v, the stretch at most %v", n, life, stretch, progressPeriod, longestProgressGap)
		case long:
			stretch = 0
		case life < shortLife || life >= longestShortLife:
			t.Fatalf("incarnation %d lives %v, want %v to %v", n, life, shortLife, longestShortLife)
		}
	}
	if stepTimeout < longestProgressGap+2*rayjob.SubmitterDecisionDelay {
		t.Errorf("stepTimeout %v is shorter than the kill schedule's gap and the operator's longest wait", stepTimeout)
	}
}
