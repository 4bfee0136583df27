package dashboardtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// Handler serves f's jobs over Ray's Jobs REST API (submit, get, list,
// logs, stop, delete), so that the real dashboard.HTTPClient can talk to it.
// Requests may carry any path prefix before "/api/jobs/", which lets one
// server stand for many clusters' dashboards: a client for
// http://host/<prefix> reaches the jobs under that prefix (all prefixes share
// f's jobs).
func (f *Fake) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const api = "/api/jobs/"
		at := strings.Index(r.URL.Path, api)
		if at < 0 {
			http.NotFound(w, r)
			return
		}
		rest := strings.Trim(r.URL.Path[at+len(api):], "/")
		f.serveJobs(w, r, rest)
	})
}

// serveJobs answers one Jobs API request; rest is the path after
// /api/jobs/: "", "<id>", "<id>/logs" or "<id>/stop".
func (f *Fake) serveJobs(w http.ResponseWriter, r *http.Request, rest string) {
	id, sub, _ := strings.Cut(rest, "/")
	if unescaped, err := url.PathUnescape(id); err == nil {
		id = unescaped
	}
	ctx := r.Context()
	switch {
	case rest == "" && r.Method == http.MethodPost:
		var req dashboard.JobSubmitRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad submission: "+err.Error(), http.StatusBadRequest)
			return
		}
		submissionID, err := f.SubmitJob(ctx, &req)
		answer(w, map[string]string{"job_id": submissionID, "submission_id": submissionID}, err)
	case rest == "" && r.Method == http.MethodGet:
		jobs, err := f.ListJobs(ctx)
		answer(w, jobs, err)
	case sub == "" && r.Method == http.MethodGet:
		info, err := f.GetJobInfo(ctx, id)
		answer(w, info, err)
	case sub == "logs" && r.Method == http.MethodGet:
		logs, err := f.GetJobLog(ctx, id)
		answer(w, map[string]string{"logs": logs}, err)
	case sub == "stop" && r.Method == http.MethodPost:
		answer(w, map[string]bool{"stopped": true}, f.StopJob(ctx, id))
	case sub == "" && r.Method == http.MethodDelete:
		answer(w, map[string]bool{"deleted": true}, f.DeleteJob(ctx, id))
	default:
		http.Error(w, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path), http.StatusNotFound)
	}
}

// answer writes out as JSON, or err as Ray would answer it: 404 for an
// unknown job, Ray's words for a submission id in use, 500 otherwise.
func answer(w http.ResponseWriter, out any, err error) {
	switch {
	case errors.Is(err, dashboard.ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, dashboard.ErrSubmissionIDInUse):
		http.Error(w, "Job with submission_id already exists. Please use a different submission_id.", http.StatusInternalServerError)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}
