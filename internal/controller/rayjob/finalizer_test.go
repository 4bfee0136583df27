package rayjob

import (
	"errors"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// TestFinalizer: deleting a RayJob stops a Ray job that may still run and
// always lets the RayJob go, even when stopping fails.
func TestFinalizer(t *testing.T) {
	tests := map[string]struct {
		job      *rayv1.RayJob
		stopErr  error
		wantStop rayv1.JobStatus
	}{
		"running Ray job is stopped": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusRunning)), wantStop: rayv1.JobStatusStopped,
		},
		"stop fails: finalizer removed anyway": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusRunning)), stopErr: errors.New("dashboard down"),
			wantStop: rayv1.JobStatusRunning,
		},
		"finished Ray job is not stopped": {
			job: makeJob(ended(rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, t0)), wantStop: rayv1.JobStatusSucceeded,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, []client.Object{tc.job, makeCluster(rayv1.Ready)})
			e.dash.AddJob(rayJobInfo(tc.job.Status.JobStatus, 0))
			e.dash.SetError(dashboardtest.OpStopJob, tc.stopErr)
			if err := e.client.Delete(t.Context(), tc.job); err != nil {
				t.Fatal(err)
			}
			if _, err := e.reconcile(t); err != nil {
				t.Fatal(err)
			}
			if job := e.job(t); job != nil {
				t.Errorf("RayJob still there with finalizers %v", job.Finalizers)
			}
			if got, _ := e.dash.Job(testJobID); got.JobStatus != tc.wantStop {
				t.Errorf("Ray job %q, want %q", got.JobStatus, tc.wantStop)
			}
		})
	}
}
