package fuzz

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/serveapps"
)

// answer is a transport that answers every request with one body.
type answer []byte

func (a answer) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(a)), Request: req, Header: http.Header{}}, nil
}

// FuzzDashboardAnswers: whatever a dashboard answers, decoding never
// panics, a failure names the request, and serve details that decode can
// be turned into application statuses.
func FuzzDashboardAnswers(f *testing.F) {
	f.Add([]byte(`{"job_id":"raysubmit_1","submission_id":"rayjob-x","status":"RUNNING","entrypoint":"python x.py","start_time":1700000000000}`))
	f.Add([]byte(`[{"submission_id":"a","status":"SUCCEEDED","end_time":1700000001000}]`))
	f.Add([]byte(`{"applications":{"app":{"status":"RUNNING","message":"","deployments":{"d":{"status":"HEALTHY"}}}},"proxies":{}}`))
	f.Add([]byte(`{"app":{"status":"DEPLOY_FAILED","message":"boom"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := dashboard.NewHTTPClient("http://head:8265", "", dashboard.WithHTTPClient(&http.Client{Transport: answer(body)}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		check := func(what string, err error) {
			if err != nil && !strings.Contains(err.Error(), "ray dashboard") {
				t.Fatalf("%s: the error %q does not name the request", what, err)
			}
		}
		_, err = c.GetJobInfo(ctx, "rayjob-x")
		check("GetJobInfo", err)
		_, err = c.ListJobs(ctx)
		check("ListJobs", err)
		details, err := c.GetServeDetails(ctx)
		check("GetServeDetails", err)
		if err == nil {
			_ = serveapps.AllRunning(serveapps.Statuses(details))
		}
		_, err = c.GetMultiApplicationStatus(ctx)
		check("GetMultiApplicationStatus", err)
	})
}
