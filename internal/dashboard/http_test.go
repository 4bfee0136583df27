package dashboard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// seenRequest is what the test server saw of one request.
type seenRequest struct {
	Method, Path, Query, Auth, ContentType, Body string
}

// answer is what the test server says to "METHOD path".
type answer struct {
	status int
	body   string
}

// dashboardServer starts a server that answers from answers (404 for
// anything else) and returns the client's base URL and the requests seen.
func dashboardServer(t *testing.T, answers map[string]answer) (string, func() []seenRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []seenRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, seenRequest{
			Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
			Auth: r.Header.Get(AuthHeader), ContentType: r.Header.Get("Content-Type"), Body: string(body),
		})
		mu.Unlock()
		a, ok := answers[r.Method+" "+r.URL.EscapedPath()]
		if !ok {
			a = answer{http.StatusNotFound, "Job does not exist"}
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

// A job as Ray 2.60 returns it, nulls included.
const realJobJSON = `{"type": "SUBMISSION", "job_id": null, "submission_id": "t1", "driver_info": null,
 "status": "SUCCEEDED", "entrypoint": "echo hi", "message": "Job finished successfully.", "error_type": null,
 "start_time": 1795304093475, "end_time": 1795304095957, "metadata": {"owner": "me"}, "runtime_env": {"env_vars": {"A": "1"}},
 "driver_agent_http_address": "http://192.0.2.2:52365", "driver_node_id": "27cb", "driver_exit_code": 0}`

func realJob() *JobInfo {
	zero := 0
	return &JobInfo{
		Type: "SUBMISSION", SubmissionID: "t1", JobStatus: rayv1.JobStatusSucceeded, Entrypoint: "echo hi",
		Message: "Job finished successfully.", StartTime: 1795304093475, EndTime: 1795304095957,
		Metadata: map[string]string{"owner": "me"}, RuntimeEnv: RuntimeEnv{"env_vars": map[string]any{"A": "1"}},
		DriverAgentHTTPAddress: "http://192.0.2.2:52365", DriverNodeID: "27cb", DriverExitCode: &zero,
	}
}

func TestHTTPClientJobs(t *testing.T) {
	// Ray's answer to a taken submission id: the sentence comes after a long
	// traceback, beyond the part an error quotes.
	traceback := "Traceback (most recent call last):\n" + strings.Repeat("  File job_head.py\n", 60) +
		"ValueError: Job with submission_id t1 already exists. Please use a different submission_id."
	cases := map[string]struct {
		token    string
		answers  map[string]answer
		call     func(context.Context, *HTTPClient) (any, error)
		want     any
		wantErr  error  // errors.Is target
		errText  string // substring of the error
		wantSeen []seenRequest
	}{
		"submit sends JSON and returns the submission id": {
			token:   "tok",
			answers: map[string]answer{"POST /api/jobs/": {200, `{"job_id": "t1", "submission_id": "t1"}`}},
			call: func(ctx context.Context, c *HTTPClient) (any, error) {
				return c.SubmitJob(ctx, &JobSubmitRequest{Entrypoint: "echo hi", SubmissionID: "t1", EntrypointNumCPUs: 1})
			},
			want: "t1",
			wantSeen: []seenRequest{{Method: "POST", Path: "/api/jobs/", Auth: "Bearer tok", ContentType: "application/json",
				Body: `{"entrypoint":"echo hi","submission_id":"t1","entrypoint_num_cpus":1}`}},
		},
		"submit with a taken id returns the id and ErrSubmissionIDInUse": {
			answers: map[string]answer{"POST /api/jobs/": {500, traceback}},
			call: func(ctx context.Context, c *HTTPClient) (any, error) {
				return c.SubmitJob(ctx, &JobSubmitRequest{Entrypoint: "echo hi", SubmissionID: "t1"})
			},
			want:    "t1",
			wantErr: ErrSubmissionIDInUse,
			errText: "500 Internal Server Error",
			wantSeen: []seenRequest{{Method: "POST", Path: "/api/jobs/", ContentType: "application/json",
				Body: `{"entrypoint":"echo hi","submission_id":"t1"}`}},
		},
		"get job info decodes Ray's job": {
			token:    "tok",
			answers:  map[string]answer{"GET /api/jobs/t1": {200, realJobJSON}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetJobInfo(ctx, "t1") },
			want:     realJob(),
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/jobs/t1", Auth: "Bearer tok"}},
		},
		"get job info of an unknown job is ErrNotFound": {
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetJobInfo(ctx, "nope") },
			want:     (*JobInfo)(nil),
			wantErr:  ErrNotFound,
			errText:  "GET /api/jobs/nope: 404 Not Found: Job does not exist",
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/jobs/nope"}},
		},
		"get job info escapes the id": {
			answers:  map[string]answer{"GET /api/jobs/a%2Fb": {200, `{"submission_id": "a/b"}`}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetJobInfo(ctx, "a/b") },
			want:     &JobInfo{SubmissionID: "a/b"},
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/jobs/a%2Fb"}},
		},
		"get job info with an unparsable body is an error": {
			answers:  map[string]answer{"GET /api/jobs/t1": {200, "<html>proxy error</html>"}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetJobInfo(ctx, "t1") },
			want:     (*JobInfo)(nil),
			errText:  `unparsable answer (status 200)`,
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/jobs/t1"}},
		},
		"get job info on a server error is an error, not ErrNotFound": {
			answers:  map[string]answer{"GET /api/jobs/t1": {503, "head is restarting"}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetJobInfo(ctx, "t1") },
			want:     (*JobInfo)(nil),
			errText:  "503 Service Unavailable: head is restarting",
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/jobs/t1"}},
		},
		"get job info with an empty id sends nothing": {
			call:    func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetJobInfo(ctx, "") },
			want:    (*JobInfo)(nil),
			errText: "empty job id",
		},
		"list jobs": {
			answers:  map[string]answer{"GET /api/jobs/": {200, "[" + realJobJSON + "]"}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.ListJobs(ctx) },
			want:     []JobInfo{*realJob()},
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/jobs/"}},
		},
		"job logs": {
			answers:  map[string]answer{"GET /api/jobs/t1/logs": {200, `{"logs": "hi\n"}`}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetJobLog(ctx, "t1") },
			want:     "hi\n",
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/jobs/t1/logs"}},
		},
		"logs of an unknown job are ErrNotFound": {
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetJobLog(ctx, "nope") },
			want:     "",
			wantErr:  ErrNotFound,
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/jobs/nope/logs"}},
		},
		"stop a running job": {
			answers:  map[string]answer{"POST /api/jobs/t1/stop": {200, `{"stopped": true}`}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return nil, c.StopJob(ctx, "t1") },
			wantSeen: []seenRequest{{Method: "POST", Path: "/api/jobs/t1/stop"}},
		},
		"stop a job that already ended": {
			answers: map[string]answer{
				"POST /api/jobs/t1/stop": {200, `{"stopped": false}`},
				"GET /api/jobs/t1":       {200, realJobJSON},
			},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return nil, c.StopJob(ctx, "t1") },
			wantSeen: []seenRequest{{Method: "POST", Path: "/api/jobs/t1/stop"}, {Method: "GET", Path: "/api/jobs/t1"}},
		},
		"stop that leaves the job running is an error": {
			answers: map[string]answer{
				"POST /api/jobs/t1/stop": {200, `{"stopped": false}`},
				"GET /api/jobs/t1":       {200, `{"submission_id": "t1", "status": "RUNNING"}`},
			},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return nil, c.StopJob(ctx, "t1") },
			errText:  "job t1 was not stopped and is RUNNING",
			wantSeen: []seenRequest{{Method: "POST", Path: "/api/jobs/t1/stop"}, {Method: "GET", Path: "/api/jobs/t1"}},
		},
		"stop an unknown job is ErrNotFound": {
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return nil, c.StopJob(ctx, "nope") },
			wantErr:  ErrNotFound,
			wantSeen: []seenRequest{{Method: "POST", Path: "/api/jobs/nope/stop"}},
		},
		"delete a job": {
			answers:  map[string]answer{"DELETE /api/jobs/t1": {200, `{"deleted": true}`}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return nil, c.DeleteJob(ctx, "t1") },
			wantSeen: []seenRequest{{Method: "DELETE", Path: "/api/jobs/t1"}},
		},
		"delete refused is an error": {
			answers:  map[string]answer{"DELETE /api/jobs/t1": {400, "Job t1 is not in a terminal state"}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return nil, c.DeleteJob(ctx, "t1") },
			errText:  "DELETE /api/jobs/t1: 400 Bad Request: Job t1 is not in a terminal state",
			wantSeen: []seenRequest{{Method: "DELETE", Path: "/api/jobs/t1"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			url, seen := dashboardServer(t, tc.answers)
			c, err := NewHTTPClient(url, tc.token)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.call(t.Context(), c)
			checkErr(t, err, tc.wantErr, tc.errText)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSeen, seen()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// checkErr fails unless err is nil when nothing is expected, or matches
// wantErr with errors.Is and contains errText.
func checkErr(t *testing.T, err, wantErr error, errText string) {
	t.Helper()
	if wantErr == nil && errText == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("want an error (%v, %q), got none", wantErr, errText)
	}
	if wantErr != nil && !errors.Is(err, wantErr) {
		t.Errorf("error %q does not match %v", err, wantErr)
	}
	if !strings.Contains(err.Error(), errText) {
		t.Errorf("error %q does not contain %q", err, errText)
	}
	if wantErr == nil && (errors.Is(err, ErrNotFound) || errors.Is(err, ErrSubmissionIDInUse)) {
		t.Errorf("error %q matches a sentinel it should not", err)
	}
}
