package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// clientRequests are the requests the dashboard client sends (method and
// path, the job id a made-up one), and the same paths without or with one
// more trailing slash, where web frameworks are wont to redirect.
var clientRequests = []string{
	"GET /api/jobs/", "POST /api/jobs/", "GET /api/jobs/e2e-nope", "GET /api/jobs/e2e-nope/logs",
	"POST /api/jobs/e2e-nope/stop", "DELETE /api/jobs/e2e-nope",
	"GET /api/serve/applications/?api_type=declarative", "PUT /api/serve/applications/",
	"GET /api/jobs", "POST /api/jobs", "GET /api/jobs/e2e-nope/", "GET /api/jobs/e2e-nope/logs/",
	"POST /api/jobs/e2e-nope/stop/", "GET /api/serve/applications?api_type=declarative", "PUT /api/serve/applications",
	"GET /", "GET /api/", "GET //api/jobs/",
}

// checkNoRedirect sends each of requests to base (with token, if any),
// without a body so that none changes anything, and fails t for every
// answer that is a redirect: the client refuses them all
// (dashboard.ErrRedirect), which is only right while Ray sends none.
func checkNoRedirect(t *testing.T, base, token string, requests []string) {
	t.Helper()
	noFollow := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	for _, r := range requests {
		method, path, _ := strings.Cut(r, " ")
		req, err := http.NewRequestWithContext(t.Context(), method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set(dashboard.AuthHeader, "Bearer "+token)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Errorf("%s: %v", r, err)
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			t.Errorf("%s (token %t): %s to %q", r, token != "", resp.Status, resp.Header.Get("Location"))
		}
	}
}

// gets are the GET requests of requests.
func gets(requests []string) []string {
	var out []string
	for _, r := range requests {
		if strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}
