package rayjob_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// errUnreachable is the dashboard failure of the status check tests.
var errUnreachable = errors.New("dial tcp: connection refused")

// runningThenUnreachable starts an HTTPMode RayJob named name whose Ray job
// runs, then makes its dashboard fail and returns the recorded
// status.jobStatusCheckFailureStartTime.
func (w *world) runningThenUnreachable(name string) time.Time {
	w.T.Helper()
	w.Create(rayJob(name, rayv1.HTTPMode, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }))
	w.makeClusterReady(w.RayJobCluster(name).Name)
	w.setRayJobStatus(name, rayv1.JobStatusRunning)
	w.Eventually("the RayJob to see its Ray job RUNNING", func() (bool, error) {
		job := w.RayJob(name)
		return job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning && job.Status.JobStatus == rayv1.JobStatusRunning, nil
	})
	if job := w.RayJob(name); job.Status.JobStatusCheckFailureStartTime != nil {
		w.T.Fatalf("jobStatusCheckFailureStartTime %v before any failure", job.Status.JobStatusCheckFailureStartTime)
	}

	w.dash.SetError(dashboardtest.OpGetJobInfo, errUnreachable)
	var since time.Time
	w.Eventually("jobStatusCheckFailureStartTime after the first failure", func() (bool, error) {
		job := w.RayJob(name)
		if job.Status.JobStatusCheckFailureStartTime == nil {
			return false, nil
		}
		since = job.Status.JobStatusCheckFailureStartTime.Time
		return true, nil
	})
	if now := w.clock.Now(); since.After(now) || now.Sub(since) >= time.Second {
		w.T.Fatalf("jobStatusCheckFailureStartTime %v, want the fake clock's %v to the second", since, now)
	}
	return since
}

// TestStatusCheckTimeout: a RayJob whose dashboard stays unreachable for
// RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS (the default, 300 s, on the fake
// clock) fails with JobStatusCheckTimeoutExceeded and KubeRay's message,
// and is not retried although backoffLimit allows it; 1 s before, it still
// runs.
func TestStatusCheckTimeout(t *testing.T) {
	w := newWorld(t)
	since := w.runningThenUnreachable("unreachable")

	w.clock.SetTime(since.Add(299 * time.Second))
	w.Eventually("a second failure 299 s in, still Running", func() (bool, error) {
		job := w.RayJob("unreachable")
		if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
			return false, errors.New("not Running: " + string(job.Status.JobDeploymentStatus) + " " + job.Status.Message)
		}
		return strings.HasSuffix(job.Status.Message, "(retrying in 6s)") &&
			job.Status.JobStatusCheckFailureStartTime.Time.Equal(since), nil
	})

	w.clock.SetTime(since.Add(300 * time.Second))
	job := w.WaitRayJob("unreachable", rayv1.JobDeploymentStatusFailed)
	wantMsg := "Job status checks have been failing since " + since.UTC().Format(time.DateTime) + "; exceeded timeout of 300s"
	if job.Status.Reason != rayv1.JobStatusCheckTimeoutExceeded || job.Status.Message != wantMsg {
		t.Errorf("reason %q message %q, want %q %q", job.Status.Reason, job.Status.Message, rayv1.JobStatusCheckTimeoutExceeded, wantMsg)
	}
	if job.Status.JobStatus != rayv1.JobStatusRunning || *job.Status.Failed != 1 || !job.Status.JobStatusCheckFailureStartTime.Time.Equal(since) {
		t.Errorf("jobStatus %q failed %d since %v, want RUNNING 1 %v", job.Status.JobStatus, *job.Status.Failed,
			job.Status.JobStatusCheckFailureStartTime, since)
	}
}

// TestStatusCheckRecovers: a dashboard that answers again before the
// timeout clears the field, and the RayJob goes on to complete after the
// first outage's timeout has passed.
func TestStatusCheckRecovers(t *testing.T) {
	w := newWorld(t)
	since := w.runningThenUnreachable("recovers")

	w.dash.SetError(dashboardtest.OpGetJobInfo, nil)
	w.clock.SetTime(since.Add(100 * time.Second))
	w.Eventually("jobStatusCheckFailureStartTime cleared", func() (bool, error) {
		job := w.RayJob("recovers")
		if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
			return false, errors.New("not Running: " + string(job.Status.JobDeploymentStatus))
		}
		return job.Status.JobStatusCheckFailureStartTime == nil && job.Status.Message == "set by test", nil
	})

	w.clock.SetTime(since.Add(400 * time.Second))
	w.setRayJobStatus("recovers", rayv1.JobStatusSucceeded)
	job := w.WaitRayJob("recovers", rayv1.JobDeploymentStatusComplete)
	if job.Status.JobStatus != rayv1.JobStatusSucceeded || job.Status.Reason != "" || job.Status.JobStatusCheckFailureStartTime != nil {
		t.Errorf("jobStatus %q reason %q since %v, want SUCCEEDED, no reason, no failure time",
			job.Status.JobStatus, job.Status.Reason, job.Status.JobStatusCheckFailureStartTime)
	}
}
