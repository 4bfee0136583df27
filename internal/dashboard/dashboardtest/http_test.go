package dashboardtest_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// TestHandlerServesTheJobsAPI drives the fake's HTTP surface with the real
// client, under a path prefix: every Jobs API call the operator makes gets
// the answer the in-memory fake gives, errors included.
func TestHandlerServesTheJobsAPI(t *testing.T) {
	fake := dashboardtest.NewFake()
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	c, err := dashboard.NewHTTPClient(srv.URL+"/cluster-a", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	req := &dashboard.JobSubmitRequest{Entrypoint: "python job.py", SubmissionID: "job-1"}
	if id, err := c.SubmitJob(ctx, req); err != nil || id != "job-1" {
		t.Fatalf("submit = %q, %v; want job-1", id, err)
	}
	if _, err := c.SubmitJob(ctx, req); !errors.Is(err, dashboard.ErrSubmissionIDInUse) {
		t.Errorf("second submit: %v, want ErrSubmissionIDInUse", err)
	}
	info, err := c.GetJobInfo(ctx, "job-1")
	if err != nil || info.JobStatus != rayv1.JobStatusPending || info.Entrypoint != "python job.py" {
		t.Fatalf("job info %+v, %v", info, err)
	}
	fake.SetLogs("job-1", "hello")
	if logs, err := c.GetJobLog(ctx, "job-1"); err != nil || logs != "hello" {
		t.Errorf("logs %q, %v", logs, err)
	}
	if jobs, err := c.ListJobs(ctx); err != nil || len(jobs) != 1 {
		t.Errorf("list %+v, %v", jobs, err)
	}
	if err := c.StopJob(ctx, "job-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteJob(ctx, "job-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJobInfo(ctx, "job-1"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("deleted job: %v, want ErrNotFound", err)
	}
	if got := len(fake.Submissions()); got != 2 {
		t.Errorf("%d submissions recorded, want 2", got)
	}
}
