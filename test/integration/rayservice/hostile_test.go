package rayservice_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/rayservice"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// maxHeapGrowth is how far the test process's heap may grow while a
// hostile head answers: a quarter of the chart's 512Mi. Decoding one
// dashboardtest.FaultHuge Serve answer in full, as the client did before
// it bounded answers, takes hundreds of MB.
const maxHeapGrowth = 128 << 20

// TestHostileHeadAnswer: two tenants' RayServices, Serve reached over HTTP
// by the real client. One head answers GET /api/serve/applications/ with
// dashboardtest.HugeAnswerBytes of small JSON objects; the operator
// refuses the answer without decoding it, stays well within its memory,
// and says why in that RayService's ServeRequestsFailing condition and a
// warning event, while the other tenant's RayService becomes Ready.
func TestHostileHeadAnswer(t *testing.T) {
	w := newWorld(t, func(o *rayservice.Options) {
		o.ServeRetryBase, o.ServeRetryMax = 200*time.Millisecond, time.Second
	})
	srv, err := dashboardtest.NewServeServer(w.serve, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	w.dashboards = srv.Provider()
	w.restart()
	heap := testenv.WatchHeap(t)
	defer checkHeapGrowth(t, heap)

	srv.SetFault(dashboardtest.URLFor("hostile-aaaaa", w.ns), dashboardtest.FaultHuge)
	w.create(rayService("hostile"))
	w.waitCluster("hostile-aaaaa")
	w.create(rayService("tenant"))
	w.waitCluster("tenant-bbbbb")
	w.bringUp("hostile-aaaaa")
	w.bringUp("tenant-bbbbb")

	want := fmt.Sprintf("ray dashboard GET /api/serve/applications/: answer too large: more than %d bytes", dashboard.MaxAnswerBytes)
	w.waitFailing("hostile", rayv1.FailedToGetServeApplications, want)
	w.waitEvent("hostile", string(rayv1.FailedToGetServeApplications))

	w.waitStatus("tenant", "promotion of tenant-bbbbb", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "tenant-bbbbb"
	})
	w.eventually("the tenant's head Pod labelled for serving", func() (bool, error) {
		return podLabel(w, "tenant-bbbbb-head", rayv1.LabelServe) == "true", nil
	})
	w.syncEndpoints("tenant-serve-svc")
	w.waitCondition("tenant", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)

	rs := w.rs("hostile")
	if s, r := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionFalse || r != string(rayv1.RayServiceInitializing) {
		t.Errorf("hostile RayService Ready %s/%s, want False/Initializing", s, r)
	}
	if n := len(w.configsOn("hostile-aaaaa")); n != 0 {
		t.Errorf("%d configs applied through the hostile head", n)
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
