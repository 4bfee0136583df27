package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/test/e2e/rayhead"
)

// serveTimeout bounds how long Serve may take to run an application.
const serveTimeout = 3 * time.Minute

// serveApp is a Serve application module the head imports from PYTHONPATH.
const serveApp = `from ray import serve

@serve.deployment(ray_actor_options={"num_cpus": 0.1})
class Hello:
    def __call__(self, request):
        return "hello"

app = Hello.bind()
`

func TestServeAgainstRealRay(t *testing.T) {
	t.Parallel()
	appDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(appDir, "e2e_serve_app.py"), []byte(serveApp), 0o644); err != nil {
		t.Fatal(err)
	}
	head := rayhead.Start(t, rayhead.Options{Env: []string{"PYTHONPATH=" + appDir}})
	c := client(t, head.DashboardURL, "")

	servePort := testenv.FreePorts(t, 1)[0]
	config, err := json.Marshal(map[string]any{
		"http_options": map[string]any{"host": "127.0.0.1", "port": servePort},
		"applications": []map[string]any{{"name": "app1", "route_prefix": "/", "import_path": "e2e_serve_app:app"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	putApplications(t, c, config)

	statuses := waitForApp(t, c, "app1", "RUNNING")
	got := map[string]string{"app": statuses["app1"].Status}
	for name, dep := range statuses["app1"].Deployments {
		got[name] = dep.Status
	}
	if diff := cmp.Diff(map[string]string{"app": "RUNNING", "Hello": "HEALTHY"}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	// Neither the dashboard's Serve API nor the Serve proxy's health check
	// redirects (the client refuses redirects, dashboard.ErrRedirect); only
	// GETs, which leave the applications alone.
	checkNoRedirect(t, head.DashboardURL, "", gets(clientRequests))
	checkNoRedirect(t, fmt.Sprintf("http://127.0.0.1:%d", servePort), "",
		[]string{"GET " + dashboard.ServeProxyHealthPath, "GET " + dashboard.ServeProxyHealthPath + "/", "GET /", "GET /nope"})

	details, err := c.GetServeDetails(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if app := details.Applications["app1"]; app.RoutePrefix != "/" || app.Deployments["Hello"].Name != "Hello" {
		t.Errorf("details of app1: %+v", app)
	}
}

// waitForApp polls the multi-application status until app has want.
func waitForApp(t *testing.T, c dashboard.Client, app, want string) map[string]*dashboard.ServeApplicationStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), serveTimeout)
	defer cancel()
	for {
		statuses, err := c.GetMultiApplicationStatus(ctx)
		if err == nil && statuses[app] != nil && statuses[app].Status == want {
			return statuses
		}
		select {
		case <-ctx.Done():
			t.Fatalf("application %s not %s within %v: %s", app, want, serveTimeout, describe(statuses, err))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// describe prints the last statuses or error for a failure message.
func describe(statuses map[string]*dashboard.ServeApplicationStatus, err error) string {
	if err != nil {
		return err.Error()
	}
	out, _ := json.Marshal(statuses)
	return string(out)
}

// putApplications PUTs a Serve config until the dashboard answers: the
// first PUT starts Serve's controller, which on a loaded machine can take
// longer than the client's timeout, and the RayService controller retries
// such a call on its next pass too. An answer that refuses the config fails
// the test at once.
func putApplications(t *testing.T, c dashboard.Client, config []byte) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, serveTimeout, true, func(context.Context) (bool, error) {
		last = c.UpdateDeployments(t.Context(), config) // a PUT under way may finish past the deadline
		if last == nil {
			return true, nil
		}
		var refused *dashboard.HTTPError
		if errors.As(last, &refused) {
			return false, last
		}
		t.Logf("put applications (retrying): %v", last)
		return false, nil
	})
	if err != nil {
		t.Fatalf("put applications: %v", last)
	}
}
