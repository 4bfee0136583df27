package rayservice_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/rayservice"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// TestServeThroughHTTPDashboardFaults runs the operator against Serve over
// HTTP (the real dashboard client, a server that misbehaves on demand).
// The first cluster's dashboard answers 500, then times out: the
// RayService stays Initializing, its ServeRequestsFailing condition and
// Warning events say what failed, no config is applied. Once the dashboard
// answers (and the back-off on the operator's clock has passed) the config
// is applied once and the RayService becomes Ready. Garbage and a refused
// connection on the Ready RayService leave it Ready, with the condition
// saying so. Deleting it while its dashboard refuses connections works.
func TestServeThroughHTTPDashboardFaults(t *testing.T) {
	w := newWorld(t, func(o *rayservice.Options) {
		o.ServeRetryBase, o.ServeRetryMax = 200*time.Millisecond, time.Second
	})
	srv, err := dashboardtest.NewServeServer(w.serve, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	w.dashboards = srv.Provider()
	w.restart()

	url := dashboardtest.URLFor("svc-aaaaa", w.ns)
	srv.SetFault(url, dashboardtest.FaultServerError)
	w.create(rayService("svc"))
	w.waitCluster("svc-aaaaa")
	w.bringUp("svc-aaaaa")
	w.waitFailing("svc", rayv1.FailedToGetServeApplications, "ray dashboard GET /api/serve/applications/: 500 Internal Server Error: Traceback")
	w.waitEvent("svc", string(rayv1.FailedToGetServeApplications))

	srv.SetFault(url, dashboardtest.FaultTimeout)
	w.clock.Step(time.Minute)
	rs := w.waitFailing("svc", rayv1.FailedToGetServeApplications, "Client.Timeout exceeded")
	if s, r := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionFalse || r != string(rayv1.RayServiceInitializing) {
		t.Errorf("Ready %s/%s while the dashboard fails, want False/Initializing", s, r)
	}
	if n := len(w.configsOn("svc-aaaaa")); n != 0 {
		t.Fatalf("%d configs applied through a failing dashboard", n)
	}

	srv.SetFault(url, "")
	w.clock.Step(time.Minute)
	w.waitStatus("svc", "promotion of svc-aaaaa", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-aaaaa"
	})
	w.eventually("the head Pod labelled for serving", func() (bool, error) {
		return podLabel(w, "svc-aaaaa-head", rayv1.LabelServe) == "true", nil
	})
	w.syncEndpoints("svc-serve-svc")
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)
	w.waitCondition("svc", rayv1.ServeRequestsFailing, metav1.ConditionFalse, rayv1.ServeRequestsSucceeded)
	if n := len(w.configsOn("svc-aaaaa")); n != 1 {
		t.Errorf("%d configs applied, want 1", n)
	}

	srv.SetFault(url, dashboardtest.FaultGarbage)
	w.waitFailing("svc", rayv1.FailedToGetServeApplications, "unparsable answer (status 200)")
	srv.SetFault(url, dashboardtest.FaultRefused)
	w.clock.Step(time.Minute)
	rs = w.waitFailing("svc", rayv1.FailedToGetServeApplications, "connect: connection refused")
	if s, r := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionTrue {
		t.Errorf("Ready %s/%s while the dashboard of a serving RayService fails, want True", s, r)
	}
	if got := rs.Status.ActiveServiceStatus.Applications["app"].Status; got != rayv1.ApplicationStatusRunning {
		t.Errorf("application status %q, want the RUNNING last seen", got)
	}

	if err := w.c.Delete(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	w.eventually("the RayService gone", func() (bool, error) { return w.rs("svc") == nil, nil })
	if got := w.allClusters(); len(got) != 0 {
		t.Errorf("clusters left: %v", got)
	}
}

// waitFailing waits until the RayService's ServeRequestsFailing condition
// is True with reason and a message containing text.
func (w *world) waitFailing(name string, reason rayv1.RayServiceConditionReason, text string) *rayv1.RayService {
	w.t.Helper()
	return w.waitStatus(name, "ServeRequestsFailing "+string(reason)+": "+text, func(st *rayv1.RayServiceStatuses) bool {
		c := conditionFor(st, rayv1.ServeRequestsFailing)
		return c.Status == metav1.ConditionTrue && c.Reason == string(reason) && strings.Contains(c.Message, text)
	})
}
