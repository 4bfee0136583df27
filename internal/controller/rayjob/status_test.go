package rayjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestObservedGeneration: every status the controller writes records the
// generation it reconciled, in a transition, in a pass that only polls, and
// when validation fails.
func TestObservedGeneration(t *testing.T) {
	tests := map[string]struct {
		job  *rayv1.RayJob
		objs []client.Object
	}{
		"New -> Initializing": {job: makeJob()},
		"Running, nothing else changes": {
			job:  makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusRunning)),
			objs: []client.Object{makeCluster(rayv1.Ready), headService()},
		},
		"ValidationFailed": {job: makeJob(func(j *rayv1.RayJob) { j.Spec.Suspend = true })},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.job.Generation = 3
			e := newEnv(t, append([]client.Object{tc.job}, tc.objs...))
			if name == "Running, nothing else changes" {
				e.dash.AddJob(rayJobInfo(rayv1.JobStatusRunning, 0))
			}
			if _, err := e.reconcile(t); err != nil {
				t.Fatal(err)
			}
			if got := e.job(t).Status.ObservedGeneration; got != 3 {
				t.Errorf("observedGeneration = %d, want 3", got)
			}
		})
	}
}

// TestDeadlinesCountPerAttempt: a retry comes back through New, which sets
// a new status.startTime, so activeDeadlineSeconds counts from the start of
// the current attempt (KubeRay's initRayJobStatusIfNeed does the same).
func TestDeadlinesCountPerAttempt(t *testing.T) {
	job := makeJob(inState(rayv1.JobDeploymentStatusNew), func(j *rayv1.RayJob) {
		// What Retrying leaves behind: ids cleared, old StartTime, one failure.
		resetAttempt(j)
		j.Status.Failed = ptr.To[int32](1)
		j.Status.StartTime = &metav1.Time{Time: t0.Add(-time.Hour)}
		j.Spec.BackoffLimit = ptr.To[int32](2)
		j.Spec.ActiveDeadlineSeconds = ptr.To[int32](60)
	})
	e := newEnv(t, []client.Object{job})
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	got := e.job(t)
	if diff := cmp.Diff(&metav1.Time{Time: t0}, got.Status.StartTime); diff != "" {
		t.Fatalf("startTime of the new attempt (-want +got):\n%s", diff)
	}
	e.clock.Step(59 * time.Second)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := e.job(t); got.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing {
		t.Fatalf("59 s into the attempt: %q %q, want Initializing", got.Status.JobDeploymentStatus, got.Status.Reason)
	}
	e.clock.Step(time.Second)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := e.job(t); got.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || got.Status.Reason != rayv1.DeadlineExceeded {
		t.Errorf("60 s into the attempt: %q %q, want Failed DeadlineExceeded (never retried)", got.Status.JobDeploymentStatus, got.Status.Reason)
	}
}
