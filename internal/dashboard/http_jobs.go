package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// SubmitJob posts req to /api/jobs/ and returns the submission id. When Ray
// already has a job with req.SubmissionID it returns that id together with an
// error matching ErrSubmissionIDInUse.
func (h *HTTPClient) SubmitJob(ctx context.Context, req *JobSubmitRequest) (string, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("ray dashboard: encoding job submission: %w", err)
	}
	var resp jobSubmitResponse
	err = h.do(ctx, call{method: http.MethodPost, path: jobsPath, body: body, out: &resp})
	if errors.Is(err, ErrSubmissionIDInUse) {
		return req.SubmissionID, err
	}
	if err != nil {
		return "", err
	}
	if resp.SubmissionID != "" {
		return resp.SubmissionID, nil
	}
	return resp.JobID, nil
}

// GetJobInfo gets /api/jobs/{id}; an unknown job is ErrNotFound.
func (h *HTTPClient) GetJobInfo(ctx context.Context, jobID string) (*JobInfo, error) {
	path, err := jobPath(jobID)
	if err != nil {
		return nil, err
	}
	var info JobInfo
	if err := h.do(ctx, call{method: http.MethodGet, path: path, out: &info}); err != nil {
		return nil, err
	}
	return &info, nil
}

// ListJobs gets /api/jobs/.
func (h *HTTPClient) ListJobs(ctx context.Context) ([]JobInfo, error) {
	var jobs []JobInfo
	if err := h.do(ctx, call{method: http.MethodGet, path: jobsPath, out: &jobs}); err != nil {
		return nil, err
	}
	return jobs, nil
}

// GetJobLog gets /api/jobs/{id}/logs; an unknown job is ErrNotFound.
func (h *HTTPClient) GetJobLog(ctx context.Context, jobID string) (string, error) {
	path, err := jobPath(jobID, "logs")
	if err != nil {
		return "", err
	}
	var logs jobLogsResponse
	if err := h.do(ctx, call{method: http.MethodGet, path: path, out: &logs}); err != nil {
		return "", err
	}
	return logs.Logs, nil
}

// StopJob posts to /api/jobs/{id}/stop. Ray answers stopped=false when the job
// had already ended; that is success unless the job is in fact still running.
func (h *HTTPClient) StopJob(ctx context.Context, jobID string) error {
	path, err := jobPath(jobID, "stop")
	if err != nil {
		return err
	}
	var resp jobStopResponse
	if err := h.do(ctx, call{method: http.MethodPost, path: path, out: &resp}); err != nil {
		return err
	}
	if resp.Stopped {
		return nil
	}
	info, err := h.GetJobInfo(ctx, jobID)
	if err != nil {
		return err
	}
	if !rayv1.IsJobTerminal(info.JobStatus) {
		return fmt.Errorf("ray dashboard: job %s was not stopped and is %s", jobID, info.JobStatus)
	}
	return nil
}

// DeleteJob deletes /api/jobs/{id}. Ray refuses to delete a job that has not
// ended, and that refusal is returned as an *HTTPError.
func (h *HTTPClient) DeleteJob(ctx context.Context, jobID string) error {
	path, err := jobPath(jobID)
	if err != nil {
		return err
	}
	return h.do(ctx, call{method: http.MethodDelete, path: path})
}
