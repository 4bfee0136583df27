// Package dashboard_test runs internal/dashboard's HTTP client against a real
// Ray head (see test/e2e/rayhead).
package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/test/e2e/rayhead"
)

// jobTimeout bounds how long a test waits for a job to reach a status.
const jobTimeout = 90 * time.Second

// client returns an HTTPClient for the head, with a timeout looser than the
// operator's so that a busy two-core machine does not fail the suite.
func client(t *testing.T, url, token string) *dashboard.HTTPClient {
	t.Helper()
	c, err := dashboard.NewHTTPClient(url, token, dashboard.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitFor polls the job until it is in one of want, and returns its info.
// Polling a real process is the one place these tests watch the clock.
func waitFor(t *testing.T, c dashboard.Client, jobID string, want ...rayv1.JobStatus) *dashboard.JobInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), jobTimeout)
	defer cancel()
	var last *dashboard.JobInfo
	for {
		info, err := c.GetJobInfo(ctx, jobID)
		if err == nil {
			last = info
			if slices.Contains(want, info.JobStatus) {
				return info
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s: want status %v within %v; last info %+v, last error %v", jobID, want, jobTimeout, last, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// submit submits req and checks that Ray kept the submission id.
func submit(t *testing.T, c dashboard.Client, req *dashboard.JobSubmitRequest) {
	t.Helper()
	got, err := c.SubmitJob(t.Context(), req)
	if err != nil {
		t.Fatalf("submit %s: %v", req.SubmissionID, err)
	}
	if got != req.SubmissionID {
		t.Fatalf("submit returned id %q, want %q", got, req.SubmissionID)
	}
}

func TestJobsAgainstRealRay(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	head := rayhead.Start(t, rayhead.Options{})
	c := client(t, head.DashboardURL, "")

	t.Run("a short job succeeds with its logs, metadata and runtime env", func(t *testing.T) {
		submit(t, c, &dashboard.JobSubmitRequest{
			Entrypoint:        `python -c "import os; print('hello from', os.environ['GREETING'])"`,
			SubmissionID:      "e2e-succeed",
			Metadata:          map[string]string{"owner": "e2e"},
			RuntimeEnv:        dashboard.RuntimeEnv{"env_vars": map[string]any{"GREETING": "ray-operator"}},
			EntrypointNumCPUs: 0.5,
		})
		info := waitFor(t, c, "e2e-succeed", rayv1.JobStatusSucceeded, rayv1.JobStatusFailed)
		exitCode := -1
		if info.DriverExitCode != nil {
			exitCode = *info.DriverExitCode
		}
		got := []any{info.JobStatus, info.SubmissionID, info.Type, info.Metadata, exitCode, info.EndTime >= info.StartTime}
		want := []any{rayv1.JobStatusSucceeded, "e2e-succeed", "SUBMISSION", map[string]string{"owner": "e2e"}, 0, true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("job info (-want +got):\n%s\nmessage: %s", diff, info.Message)
		}
		logs, err := c.GetJobLog(t.Context(), "e2e-succeed")
		if err != nil || !strings.Contains(logs, "hello from ray-operator") {
			t.Errorf("logs = %q, %v; want them to contain the job's output", logs, err)
		}
	})

	t.Run("a failing job ends FAILED", func(t *testing.T) {
		submit(t, c, &dashboard.JobSubmitRequest{Entrypoint: `python -c "import sys; sys.exit(3)"`, SubmissionID: "e2e-fail"})
		info := waitFor(t, c, "e2e-fail", rayv1.JobStatusSucceeded, rayv1.JobStatusFailed)
		if info.JobStatus != rayv1.JobStatusFailed || info.Message == "" {
			t.Errorf("status %s, message %q; want FAILED with a message", info.JobStatus, info.Message)
		}
	})

	t.Run("a long job is stopped", func(t *testing.T) {
		submit(t, c, &dashboard.JobSubmitRequest{Entrypoint: "sleep 600", SubmissionID: "e2e-stop"})
		waitFor(t, c, "e2e-stop", rayv1.JobStatusRunning)
		if err := c.DeleteJob(t.Context(), "e2e-stop"); err == nil {
			t.Error("Ray deleted a running job; want a refusal")
		}
		if err := c.StopJob(t.Context(), "e2e-stop"); err != nil {
			t.Fatalf("stop: %v", err)
		}
		waitFor(t, c, "e2e-stop", rayv1.JobStatusStopped)
		if err := c.StopJob(t.Context(), "e2e-stop"); err != nil {
			t.Errorf("stopping a stopped job: %v", err)
		}
	})

	t.Run("a taken submission id is recognised", func(t *testing.T) {
		id, err := c.SubmitJob(t.Context(), &dashboard.JobSubmitRequest{Entrypoint: "true", SubmissionID: "e2e-fail"})
		if !errors.Is(err, dashboard.ErrSubmissionIDInUse) || id != "e2e-fail" {
			t.Errorf("resubmit = %q, %v; want the id and ErrSubmissionIDInUse", id, err)
		}
	})

	t.Run("Ray redirects none of the client's requests", func(t *testing.T) {
		checkNoRedirect(t, head.DashboardURL, "", clientRequests)
	})

	t.Run("list and delete", func(t *testing.T) {
		jobs, err := c.ListJobs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.SubmissionID)
		}
		slices.Sort(ids)
		if diff := cmp.Diff([]string{"e2e-fail", "e2e-stop", "e2e-succeed"}, ids); diff != "" {
			t.Errorf("listed jobs (-want +got):\n%s", diff)
		}
		for _, id := range ids {
			if err := c.DeleteJob(t.Context(), id); err != nil {
				t.Errorf("delete %s: %v", id, err)
			}
		}
		_, err = c.GetJobInfo(t.Context(), "e2e-succeed")
		if !errors.Is(err, dashboard.ErrNotFound) {
			t.Errorf("info of a deleted job: %v, want ErrNotFound", err)
		}
		if _, err := c.GetJobLog(t.Context(), "e2e-succeed"); !errors.Is(err, dashboard.ErrNotFound) {
			t.Errorf("logs of a deleted job: %v, want ErrNotFound", err)
		}
		if jobs, err := c.ListJobs(t.Context()); err != nil || len(jobs) != 0 {
			t.Errorf("after delete, list = %v, %v; want none", jobs, err)
		}
	})
	t.Logf("suite time with head start and stop excluded: %v (head start %v)",
		time.Since(begin)-head.StartupTime, head.StartupTime.Round(time.Millisecond))
}

func TestTokenAuthAgainstRealRay(t *testing.T) {
	t.Parallel()
	const token = "e2e-secret-token"
	head := rayhead.Start(t, rayhead.Options{AuthToken: token})

	t.Run("without the header Ray refuses", func(t *testing.T) {
		for _, tok := range []string{"", "wrong-token"} {
			var httpErr *dashboard.HTTPError
			_, err := client(t, head.DashboardURL, tok).ListJobs(t.Context())
			if !errors.As(err, &httpErr) || (httpErr.StatusCode != http.StatusUnauthorized && httpErr.StatusCode != http.StatusForbidden) {
				t.Errorf("token %q: %v; want 401 or 403", tok, err)
			}
		}
	})

	t.Run("Ray redirects none of the client's requests, with or without the token", func(t *testing.T) {
		checkNoRedirect(t, head.DashboardURL, "", clientRequests)
		checkNoRedirect(t, head.DashboardURL, "wrong-token", clientRequests)
		checkNoRedirect(t, head.DashboardURL, token, clientRequests)
	})

	t.Run("with x-ray-authorization a job runs", func(t *testing.T) {
		c := client(t, head.DashboardURL, token)
		submit(t, c, &dashboard.JobSubmitRequest{Entrypoint: "echo authenticated", SubmissionID: "e2e-auth"})
		if info := waitFor(t, c, "e2e-auth", rayv1.JobStatusSucceeded, rayv1.JobStatusFailed); info.JobStatus != rayv1.JobStatusSucceeded {
			t.Fatalf("status %s: %s", info.JobStatus, info.Message)
		}
		if logs, err := c.GetJobLog(t.Context(), "e2e-auth"); err != nil || !strings.Contains(logs, "authenticated") {
			t.Errorf("logs = %q, %v", logs, err)
		}
		if err := c.DeleteJob(t.Context(), "e2e-auth"); err != nil {
			t.Errorf("delete: %v", err)
		}
	})
}
