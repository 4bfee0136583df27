package rayjob

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// observation is one ObserveRayJobExecutionDuration call.
type observation struct {
	name, namespace string
	status          rayv1.JobDeploymentStatus
	retries         int
	seconds         float64
}

// recordingObserver records the metric calls of the controller.
type recordingObserver struct {
	observed []observation
	deleted  []string
}

func (o *recordingObserver) ObserveRayJobExecutionDuration(name, namespace string, status rayv1.JobDeploymentStatus, retries int, seconds float64) {
	o.observed = append(o.observed, observation{name, namespace, status, retries, seconds})
}

func (o *recordingObserver) DeleteRayJobMetrics(name, namespace string) {
	o.deleted = append(o.deleted, namespace+"/"+name)
}

// drain returns the events recorded so far.
func drain(e *testEnv) []string {
	var out []string
	for {
		select {
		case ev := <-e.events.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestExecutionDurationMetric: the duration is observed when an attempt ends
// (Retrying, Complete or Failed), with the retries before it, and forgotten
// with the RayJob.
func TestExecutionDurationMetric(t *testing.T) {
	tests := map[string]struct {
		job  *rayv1.RayJob
		want []observation
	}{
		"Complete": {
			job:  makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusRunning)),
			want: []observation{{"job", "ns", rayv1.JobDeploymentStatusComplete, 0, 42}},
		},
		"Retrying after one earlier failure": {
			job: makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusRunning), func(j *rayv1.RayJob) {
				j.Spec.BackoffLimit = ptr.To[int32](3)
				j.Status.Failed = ptr.To[int32](1)
			}),
			want: []observation{{"job", "ns", rayv1.JobDeploymentStatusRetrying, 1, 42}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, []client.Object{tc.job, makeCluster(rayv1.Ready), headService()})
			obs := &recordingObserver{}
			e.r.Metrics = obs
			status := rayv1.JobStatusSucceeded
			if tc.job.Spec.BackoffLimit != nil {
				status = rayv1.JobStatusFailed
			}
			e.dash.AddJob(rayJobInfo(status, 1))
			e.clock.Step(42 * time.Second)
			if _, err := e.reconcile(t); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, obs.observed, cmp.AllowUnexported(observation{})); diff != "" {
				t.Errorf("observations (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("forgotten when the RayJob is gone", func(t *testing.T) {
		e := newEnv(t, nil)
		obs := &recordingObserver{}
		e.r.Metrics = obs
		if _, err := e.reconcile(t); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"ns/job"}, obs.deleted); diff != "" {
			t.Errorf("deleted (-want +got):\n%s", diff)
		}
	})
}

// TestEvents: every action is reported, and every transition but the
// forward moves into Initializing and Running, which the actions mark.
func TestEvents(t *testing.T) {
	e := newEnv(t, []client.Object{makeJob(inState(rayv1.JobDeploymentStatusInitializing)), makeCluster(rayv1.Ready), headService()})
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(drain(e), "\n")
	if want := "Normal CreatedRayJobSubmitter Created Kubernetes Job ns/job"; !strings.Contains(got, want) {
		t.Errorf("events %q lack %q", got, want)
	}
	if strings.Contains(got, "JobDeploymentStatusChanged") {
		t.Errorf("events %q report the move to Running", got)
	}

	e = newEnv(t, []client.Object{makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusRunning)), makeCluster(rayv1.Ready), headService()})
	e.dash.AddJob(rayJobInfo(rayv1.JobStatusSucceeded, uint64(t0.UnixMilli())))
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	want := `Normal JobDeploymentStatusChanged JobDeploymentStatus changed from "Running" to "Complete"`
	if got := strings.Join(drain(e), "\n"); !strings.Contains(got, want) {
		t.Errorf("events %q lack %q", got, want)
	}

	e = newEnv(t, []client.Object{makeJob(inState(rayv1.JobDeploymentStatusInitializing))})
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(drain(e), "\n"); !strings.Contains(got, "Normal CreatedRayCluster Created RayCluster ns/job-cluster") {
		t.Errorf("events %q lack the cluster creation", got)
	}
}
