package rayjob_test

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// TestHTTPModeThroughDashboardFaults: an HTTPMode RayJob whose dashboard
// answers 500 to the submission, and later to the job info requests, stays
// Running with a status message naming the failure, and once the dashboard
// recovers (and the back-off on the operator's clock has passed) reaches
// Complete with the Ray job submitted exactly once.
func TestHTTPModeThroughDashboardFaults(t *testing.T) {
	w := newWorld(t)
	if w.dash.SetFault(dashboardtest.OpSubmitJob, dashboardtest.FaultServerError, "") == nil {
		t.Fatal("no fault error")
	}
	w.Create(rayJob("faulty", rayv1.HTTPMode))
	w.makeClusterReady(w.RayJobCluster("faulty").Name)
	w.Eventually("a status message about the failed submission", func() (bool, error) {
		job := w.RayJob("faulty")
		return job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning &&
			strings.HasPrefix(job.Status.Message, "Failed to submit Ray job "+job.Status.JobID+": ray dashboard POST /api/jobs/: 500"), nil
	})

	w.dash.SetError(dashboardtest.OpSubmitJob, nil)
	w.clock.Step(time.Minute) // past any back-off
	w.Eventually("the Ray job on the dashboard", func() (bool, error) {
		_, ok := w.dash.Job(w.RayJob("faulty").Status.JobID)
		return ok, nil
	})

	jobID := w.RayJob("faulty").Status.JobID
	if w.dash.SetFault(dashboardtest.OpGetJobInfo, dashboardtest.FaultServerError, jobID) == nil {
		t.Fatal("no fault error")
	}
	w.dash.SetJobStatus(jobID, rayv1.JobStatusSucceeded, "set by test")
	w.clock.Step(time.Minute)
	w.Eventually("a status message about the failed job info request", func() (bool, error) {
		return strings.HasPrefix(w.RayJob("faulty").Status.Message, "Failed to get Ray job "+jobID+" from the dashboard: ray dashboard GET /api/jobs/"+jobID+": 500"), nil
	})
	if job := w.RayJob("faulty"); job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
		t.Fatalf("%s while the dashboard fails, want Running", job.Status.JobDeploymentStatus)
	}

	w.dash.SetError(dashboardtest.OpGetJobInfo, nil)
	w.clock.Step(time.Minute)
	job := w.WaitRayJob("faulty", rayv1.JobDeploymentStatusComplete)
	if job.Status.JobStatus != rayv1.JobStatusSucceeded || job.Status.Message != "set by test" {
		t.Errorf("status %s %q, want SUCCEEDED \"set by test\"", job.Status.JobStatus, job.Status.Message)
	}
	jobs, err := w.dash.ListJobs(t.Context())
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs on the dashboard %+v (%v), want one", jobs, err)
	}
	for _, sub := range w.dash.Submissions() {
		if sub.SubmissionID != jobID {
			t.Errorf("a submission with id %q, want every attempt to use %q", sub.SubmissionID, jobID)
		}
	}
}
