package rayjob_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// maxHeapGrowth is how far the test process's heap may grow while a
// hostile head answers: a quarter of the chart's 512Mi. Decoding one
// dashboardtest.FaultHuge job answer in full, as the client did before it
// bounded answers, takes ~400 MB of it.
const maxHeapGrowth = 128 << 20

// TestHostileHeadAnswer: two tenants' HTTPMode RayJobs, their dashboards
// reached over HTTP by the real client. One head answers the job info
// request with dashboardtest.HugeAnswerBytes of small JSON objects; the
// operator refuses the answer without decoding it, stays well within its
// memory, and says why in that RayJob's status message and a warning
// event, while the other tenant's RayJob completes.
func TestHostileHeadAnswer(t *testing.T) {
	w := emptyWorld(t)
	huge := dashboardtest.FaultHandler(dashboardtest.FaultHuge)
	normal := w.dash.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		// The hostile head takes the submission as Ray would, and then
		// answers every job info request hugely.
		if strings.Contains(r.URL.Path, "/hostile-") && r.Method == http.MethodGet {
			huge.ServeHTTP(rw, r)
			return
		}
		normal.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	w.dashboards = func(baseURL, token string) (dashboard.Client, error) {
		return dashboard.NewHTTPClient(srv.URL+"/"+baseURL, token, dashboard.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	}
	w.startRayJob(cache.Options{DefaultNamespaces: map[string]cache.Config{w.NS: {}}})
	heap := testenv.WatchHeap(t)
	defer checkHeapGrowth(t, heap)

	w.Create(rayJob("hostile", rayv1.HTTPMode))
	w.Create(rayJob("tenant", rayv1.HTTPMode))
	w.makeClusterReady(w.RayJobCluster("hostile").Name)
	w.makeClusterReady(w.RayJobCluster("tenant").Name)

	w.setRayJobStatus("tenant", rayv1.JobStatusSucceeded)
	w.WaitRayJob("tenant", rayv1.JobDeploymentStatusComplete)

	want := fmt.Sprintf("answer too large: more than %d bytes", dashboard.MaxAnswerBytes)
	w.Eventually("the hostile RayJob's status message naming the refused answer", func() (bool, error) {
		job := w.RayJob("hostile")
		return job.Status.JobID != "" && strings.HasPrefix(job.Status.Message,
			"Failed to get Ray job "+job.Status.JobID+" from the dashboard: ray dashboard GET /api/jobs/"+job.Status.JobID+": "+want), nil
	})
	if job := w.RayJob("hostile"); job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
		t.Errorf("hostile RayJob %s, want Running (a failing dashboard is not the job's failure)", job.Status.JobDeploymentStatus)
	}
	if e := w.WaitEvent("hostile", "FailedToGetRayJobInfo"); !strings.Contains(e.Note, want) {
		t.Errorf("event %q, want it to name the refused answer", e.Note)
	}
}

// checkHeapGrowth fails t if the heap grew past maxHeapGrowth since the
// watch began (deferred, so that it says so on a test that failed too).
func checkHeapGrowth(t *testing.T, heap *testenv.HeapWatch) {
	if grown := heap.Growth(); grown > maxHeapGrowth {
		t.Errorf("the heap grew by %d MiB while the hostile head answered, want at most %d MiB", grown>>20, maxHeapGrowth>>20)
	} else {
		t.Logf("the heap grew by %d MiB at most", grown>>20)
	}
}
