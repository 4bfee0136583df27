package dashboardtest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

func TestFakeJobLifecycle(t *testing.T) {
	ctx := t.Context()
	clock := clocktesting.NewFakeClock(time.UnixMilli(1_795_000_000_000))
	f := NewFakeWithClock(clock)
	client, err := f.Provider()("head-svc:8265", "tok")
	if err != nil {
		t.Fatal(err)
	}
	req := &dashboard.JobSubmitRequest{Entrypoint: "python x.py", SubmissionID: "j", Metadata: map[string]string{"a": "b"}}
	if id, err := client.SubmitJob(ctx, req); err != nil || id != "j" {
		t.Fatalf("submit = %q, %v", id, err)
	}
	if id, err := client.SubmitJob(ctx, req); !errors.Is(err, dashboard.ErrSubmissionIDInUse) || id != "j" {
		t.Errorf("second submit = %q, %v; want ErrSubmissionIDInUse", id, err)
	}
	info, err := client.GetJobInfo(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	want := &dashboard.JobInfo{Type: "SUBMISSION", SubmissionID: "j", JobStatus: rayv1.JobStatusPending,
		Entrypoint: "python x.py", Metadata: map[string]string{"a": "b"}, StartTime: 1_795_000_000_000}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
	if err := client.DeleteJob(ctx, "j"); err == nil {
		t.Error("deleted a pending job")
	}
	f.SetJobStatus("j", rayv1.JobStatusRunning, "")
	clock.Step(2500 * time.Millisecond)
	if err := client.StopJob(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Job("j"); got.JobStatus != rayv1.JobStatusStopped || got.EndTime != 1_795_000_002_500 {
		t.Errorf("after stop: %s, ended at %d", got.JobStatus, got.EndTime)
	}
	if err := client.DeleteJob(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.GetJobInfo(ctx, "j"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("deleted job: %v, want ErrNotFound", err)
	}
	urls, tokens := f.ProvidedFor()
	if diff := cmp.Diff([]string{"head-svc:8265", "tok"}, append(urls, tokens...)); diff != "" {
		t.Errorf("provider calls (-want +got):\n%s", diff)
	}
	if got := len(f.Submissions()); got != 2 {
		t.Errorf("submissions = %d, want 2", got)
	}
}

func TestFakeInjectedErrors(t *testing.T) {
	f := NewFake()
	boom := errors.New("boom")
	f.SetError(OpListJobs, boom)
	if _, err := f.ListJobs(t.Context()); !errors.Is(err, boom) {
		t.Errorf("ListJobs: %v", err)
	}
	f.SetError(OpListJobs, nil)
	if jobs, err := f.ListJobs(t.Context()); err != nil || len(jobs) != 0 {
		t.Errorf("ListJobs after clearing: %v, %v", jobs, err)
	}
}

// TestFakeUpdateJob: a test moves a job's status and times in one step; a
// job the dashboard does not know is reported.
func TestFakeUpdateJob(t *testing.T) {
	f := NewFake()
	f.AddJob(dashboard.JobInfo{SubmissionID: "j", JobStatus: rayv1.JobStatusPending, StartTime: 1})
	if !f.UpdateJob("j", func(info *dashboard.JobInfo) {
		info.JobStatus, info.StartTime, info.EndTime, info.SubmissionID = rayv1.JobStatusSucceeded, 1000, 2000, "renamed"
	}) {
		t.Fatal("UpdateJob did not find the job")
	}
	got, _ := f.Job("j")
	want := dashboard.JobInfo{SubmissionID: "j", JobStatus: rayv1.JobStatusSucceeded, StartTime: 1000, EndTime: 2000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
	if f.UpdateJob("missing", func(*dashboard.JobInfo) { t.Error("mutate called for a missing job") }) {
		t.Error("UpdateJob found a missing job")
	}
}
