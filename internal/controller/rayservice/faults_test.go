package rayservice

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
)

// wantBackoff is the documented requeue after each consecutive failure of
// a request to Serve: 3 s doubling to a 1 minute cap.
var wantBackoff = []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 24 * time.Second,
	48 * time.Second, time.Minute, time.Minute}

// activeHead is the name of the active cluster's head Pod.
const activeHead = active + "-head"

// pass runs one Reconcile that must not fail and returns its requeue.
// failEachBackoffStep runs one pass per step of wantBackoff, the Serve
// call still failing: each pass must requeue after that step's wait and
// make calls grow by perPass; check then looks at failure n, whose status
// message should be msg; and passes inside the back-off must stay quiet.
func (e *testEnv) failEachBackoffStep(t *testing.T, what string, calls func() int, perPass int, check func(n int, msg string)) {
	t.Helper()
	for i, wait := range wantBackoff {
		before := calls()
		msg := wantRetry(what, i+1, wait, e.clock.Now())
		if got := e.pass(t); got != wait {
			t.Fatalf("failure %d: requeue %v, want %v", i+1, got, wait)
		}
		if n := calls() - before; n != perPass {
			t.Fatalf("failure %d: %d Serve calls, want %d", i+1, n, perPass)
		}
		check(i+1, msg)
		e.backOffQuietly(t, wait, calls)
	}
}

func (e *testEnv) pass(t *testing.T) time.Duration {
	t.Helper()
	res, err := e.reconcile(t)
	if err != nil {
		t.Fatalf("Reconcile error %v; a Serve fault must not be returned to the rate limiter", err)
	}
	return res.RequeueAfter
}

// wantRetry is a failure as the condition and the new events tell it: the
// n-th in a row, retried after wait.
func wantRetry(what string, n int, wait time.Duration, now time.Time) string {
	at := now.Add(wait).UTC().Format(time.RFC3339)
	if n == 1 {
		return fmt.Sprintf("%s (retrying in %s, at %s)", what, wait, at)
	}
	return fmt.Sprintf("%s (failed %d times in a row; retrying in %s, at %s)", what, n, wait, at)
}

// checkFailing checks ServeRequestsFailing: True since t0 with reason and
// message.
func checkFailing(t *testing.T, rs *rayv1.RayService, reason rayv1.RayServiceConditionReason, message string) {
	t.Helper()
	want := &metav1.Condition{Type: string(rayv1.ServeRequestsFailing), Status: metav1.ConditionTrue, Reason: string(reason),
		Message: message, ObservedGeneration: rs.Generation, LastTransitionTime: metav1.Time{Time: t0}}
	if diff := cmp.Diff(want, conditions.Get(rs.Status.Conditions, rayv1.ServeRequestsFailing)); diff != "" {
		t.Fatalf("ServeRequestsFailing (-want +got):\n%s", diff)
	}
}

// checkRecovered checks ServeRequestsFailing False.
func checkRecovered(t *testing.T, rs *rayv1.RayService) {
	t.Helper()
	c := conditions.Get(rs.Status.Conditions, rayv1.ServeRequestsFailing)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.ServeRequestsSucceeded) || c.Message != msgServeRequestsSucceed {
		t.Fatalf("ServeRequestsFailing %+v, want False %s", c, rayv1.ServeRequestsSucceeded)
	}
}

// checkEvents checks the events recorded since the last call.
func (e *testEnv) checkEvents(t *testing.T, when string, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, e.recordedEvents(), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("%s: events (-want +got):\n%s", when, diff)
	}
}

// backOffQuietly checks a pass 1 s before the back-off of wait ends: it
// asks for the rest, makes no request (calls counts them) and records
// nothing; then the clock reaches the end of the back-off.
func (e *testEnv) backOffQuietly(t *testing.T, wait time.Duration, calls func() int) {
	t.Helper()
	e.clock.Step(wait - time.Second)
	before := calls()
	if got := e.pass(t); got != time.Second {
		t.Fatalf("pass inside the back-off: requeue %v, want 1s", got)
	}
	if n := calls() - before; n != 0 {
		t.Fatalf("pass inside the back-off made %d requests", n)
	}
	e.checkEvents(t, "pass inside the back-off")
	e.clock.Step(time.Second)
}

// apps are the application names and statuses of a status.
func apps(st rayv1.RayServiceStatus) map[string]string {
	out := map[string]string{}
	for name, app := range st.Applications {
		out[name] = app.Status
	}
	return out
}

// TestServeAPIFaultsOnAServingRayService: for each fault of the read of
// the Serve applications, a Ready RayService stays Ready with the
// application statuses last seen; ServeRequestsFailing and a Warning event
// say what failed and when it is retried; each pass comes back after the
// back-off (3 s doubling to 60 s, never an error for the rate limiter); a
// pass inside the back-off asks nothing. Once the dashboard answers, the
// statuses are fresh, the condition False, the RayService idle, and the
// next failure starts the back-off over.
func TestServeAPIFaultsOnAServingRayService(t *testing.T) {
	for _, fault := range dashboardtest.Faults {
		t.Run(string(fault), func(t *testing.T) {
			e := newEnv(t, idleWorld(t, serving(rayService()).Obj()))
			e.serveRunning(active)
			url := dashboardURL(active)
			faultErr := e.serve.SetFault(url, dashboardtest.OpGetServeDetails, fault)
			if faultErr == nil {
				t.Fatal("no fault error")
			}
			e.serve.SetAppStatus(url, "app2", rayv1.ApplicationStatusRunning) // not seen until the dashboard answers
			gets := func() int { return e.serve.Calls(url, dashboardtest.OpGetServeDetails) }
			what := "Failed to get the Serve applications of the RayCluster ns/svc-active: " + faultErr.Error()

			e.failEachBackoffStep(t, what, gets, 1, func(n int, msg string) {
				rs := e.rayService(t)
				checkFailing(t, rs, rayv1.FailedToGetServeApplications, msg)
				if !conditions.IsTrue(rs.Status.Conditions, rayv1.RayServiceReady) || !cmp.Equal(apps(rs.Status.ActiveServiceStatus), map[string]string{"app": "RUNNING"}) {
					t.Fatalf("failure %d: Ready %v, applications %v; want Ready with the last seen", n,
						conditions.IsTrue(rs.Status.Conditions, rayv1.RayServiceReady), apps(rs.Status.ActiveServiceStatus))
				}
				e.checkEvents(t, fmt.Sprintf("failure %d", n), "Warning FailedToGetServeApplications "+msg)
			})

			e.serve.SetOpError(url, dashboardtest.OpGetServeDetails, nil)
			if got := e.pass(t); got != DefaultIdleRequeue {
				t.Fatalf("after recovery: requeue %v, want the idle %v", got, DefaultIdleRequeue)
			}
			rs := e.rayService(t)
			checkRecovered(t, rs)
			if got := apps(rs.Status.ActiveServiceStatus); !cmp.Equal(got, map[string]string{"app": "RUNNING", "app2": "RUNNING"}) {
				t.Fatalf("after recovery: applications %v, want both", got)
			}
			e.checkEvents(t, "after recovery")

			e.clock.Step(DefaultIdleRequeue)
			if e.serve.SetFault(url, dashboardtest.OpGetServeDetails, fault) == nil {
				t.Fatal("no fault error")
			}
			if got := e.pass(t); got != wantBackoff[0] {
				t.Fatalf("failure after recovery: requeue %v, want %v", got, wantBackoff[0])
			}
		})
	}
}

// TestServeConfigFaults: for each fault of the PUT of a changed
// serveConfigV2 on a Ready RayService, nothing is recorded, KubeRay's
// FailedToUpdateServeApplications event and the condition say what failed,
// and the read and the PUT are retried together after the back-off (a read
// that succeeds does not reset it). Garbage in answer to a PUT is no
// failure: the client does not read it. Once Serve takes the config it is
// recorded and the condition is False.
func TestServeConfigFaults(t *testing.T) {
	const newConfig = "applications:\n  - name: app\n    import_path: app:v2\n    route_prefix: /\n"
	for _, fault := range dashboardtest.Faults {
		t.Run(string(fault), func(t *testing.T) {
			rs := serving(rayService().ServeConfig(newConfig)).Obj()
			e := newEnv(t, replace(idleWorld(t, rs), servingCluster(t, rayService().Obj(), active).Obj()))
			e.serveRunning(active)
			url := dashboardURL(active)
			faultErr := e.serve.SetFault(url, dashboardtest.OpUpdateDeployments, fault)
			if faultErr == nil {
				e.pass(t)
				if got := e.clusterStates(t)[0].AppliedConfig; got != newConfig {
					t.Fatalf("%s: recorded %q, want the new config applied", fault, got)
				}
				if c := conditions.Get(e.rayService(t).Status.Conditions, rayv1.ServeRequestsFailing); c != nil {
					t.Fatalf("%s: %+v, want no ServeRequestsFailing", fault, c)
				}
				return
			}
			calls := func() int {
				return e.serve.Calls(url, dashboardtest.OpGetServeDetails) + e.serve.Calls(url, dashboardtest.OpUpdateDeployments)
			}
			what := "Failed to update serve applications to the RayCluster ns/svc-active " +
				"(see Issue 5 of the RayService troubleshooting guide): " + faultErr.Error()

			e.failEachBackoffStep(t, what, calls, 2, func(n int, msg string) {
				checkFailing(t, e.rayService(t), rayv1.FailedToUpdateServeApplications, msg)
				e.checkEvents(t, fmt.Sprintf("failure %d", n),
					"Warning FailedToUpdateServeApplications Failed to update serve applications to the RayCluster ns/svc-active: "+faultErr.Error())
				if got := e.clusterStates(t)[0].AppliedConfig; got != appliedConfig {
					t.Fatalf("failure %d: recorded %q after a failed PUT", n, got)
				}
			})

			e.serve.SetOpError(url, dashboardtest.OpUpdateDeployments, nil)
			e.pass(t)
			checkRecovered(t, e.rayService(t))
			if got := e.clusterStates(t)[0].AppliedConfig; got != newConfig {
				t.Fatalf("after recovery: recorded %q, want the new config", got)
			}
			e.checkEvents(t, "after recovery", "Normal UpdatedServeApplications Updated serve applications to the RayCluster ns/svc-active")
		})
	}
}

// TestServeProxyFaults: for each fault of the health check of a head's
// Serve proxy that had answered, the head leaves the serve Service (label
// "false", as KubeRay), a Warning event and the condition say what failed,
// and the proxy is checked again only after the back-off. A 200 with
// garbage or a slow body is healthy (as KubeRay, the body is not judged).
// When the proxy answers, the head serves again.
func TestServeProxyFaults(t *testing.T) {
	for _, fault := range dashboardtest.Faults {
		t.Run(string(fault), func(t *testing.T) {
			e := newEnv(t, idleWorld(t, serving(rayService()).Obj()))
			e.serveRunning(active)
			faultErr := dashboardtest.FaultError(t.Context(), fault, dashboardtest.OpServeProxyHealth, "")
			checks := func() int { return e.proxyChecks[activeHead] }
			if faultErr == nil {
				if got := e.pass(t); got != DefaultIdleRequeue || e.serveLabels(t)[activeHead] != "true" {
					t.Fatalf("%s: requeue %v, label %q; want a healthy head", fault, got, e.serveLabels(t)[activeHead])
				}
				e.checkEvents(t, string(fault))
				return
			}
			e.unhealthy[activeHead] = faultErr
			what := "The Serve proxy of the head Pod ns/svc-active-head of RayCluster svc-active failed its health check: " + faultErr.Error()

			e.failEachBackoffStep(t, what, checks, 1, func(n int, msg string) {
				if got := e.serveLabels(t)[activeHead]; got != "false" {
					t.Fatalf("failure %d: ray.io/serve %q, want false", n, got)
				}
				checkFailing(t, e.rayService(t), rayv1.FailedServeProxyHealthCheck, msg)
				want := []string{"Warning FailedServeProxyHealthCheck " + msg}
				if n == 1 {
					want = append(want, `Normal UpdatedHeadPodServeLabel Updated the serve label to "false" for the Head Pod ns/svc-active-head`)
				}
				e.checkEvents(t, fmt.Sprintf("failure %d", n), want...)
			})

			delete(e.unhealthy, activeHead)
			if got := e.pass(t); got != DefaultIdleRequeue {
				t.Fatalf("after recovery: requeue %v", got)
			}
			if got := e.serveLabels(t)[activeHead]; got != "true" {
				t.Fatalf("after recovery: ray.io/serve %q", got)
			}
			checkRecovered(t, e.rayService(t))
			e.checkEvents(t, "after recovery", `Normal UpdatedHeadPodServeLabel Updated the serve label to "true" for the Head Pod ns/svc-active-head`)
		})
	}
}

// TestStartingServeProxyIsNoFault: a proxy that never answered yet is
// starting (Serve starts proxies when it deploys applications): it is
// checked on every pass, as KubeRay, with no event and no condition.
func TestStartingServeProxyIsNoFault(t *testing.T) {
	rs := serving(rayService()).Obj()
	e := newEnv(t, replace(idleWorld(t, rs), headPod(active).Label(rayv1.LabelServe, "false").Obj()))
	e.serveRunning(active)
	e.unhealthy[activeHead] = dashboardtest.FaultError(t.Context(), dashboardtest.FaultRefused, dashboardtest.OpServeProxyHealth, "")
	for i := range 3 {
		if got := e.pass(t); got != DefaultIdleRequeue {
			t.Fatalf("pass %d: requeue %v", i, got)
		}
		e.clock.Step(DefaultIdleRequeue)
	}
	if got := e.proxyChecks[activeHead]; got != 3 {
		t.Errorf("%d checks in 3 passes", got)
	}
	e.checkEvents(t, "starting proxy")
	if c := conditions.Get(e.rayService(t).Status.Conditions, rayv1.ServeRequestsFailing); c != nil {
		t.Errorf("%+v, want no ServeRequestsFailing", c)
	}
}

// TestServeFaultsWhileInitializing: passes of a RayService that is coming
// up come every 2 s (work in flight), but its failing dashboard is asked
// only when the back-off allows: at 0, 3, 9, 21, 45 and 93 s. Once it
// answers, the config is applied once.
func TestServeFaultsWhileInitializing(t *testing.T) {
	rs := initializing(rayService(), t0).PendingCluster(newCluster).Obj()
	e := newEnv(t, []client.Object{rs, readyCluster(t, rs, newCluster).Obj(), headPod(newCluster).Obj()})
	url := dashboardURL(newCluster)
	faultErr := e.serve.SetFault(url, dashboardtest.OpGetServeDetails, dashboardtest.FaultServerError)
	var askedAt []time.Duration
	for e.clock.Since(t0) < 100*time.Second {
		before := e.serve.Calls(url, dashboardtest.OpGetServeDetails)
		requeue := e.pass(t)
		if e.serve.Calls(url, dashboardtest.OpGetServeDetails) > before {
			askedAt = append(askedAt, e.clock.Since(t0))
		}
		if requeue <= 0 || requeue > DefaultInFlightRequeue {
			t.Fatalf("at %v: requeue %v, want at most %v", e.clock.Since(t0), requeue, DefaultInFlightRequeue)
		}
		e.clock.Step(requeue)
	}
	want := []time.Duration{0, 3 * time.Second, 9 * time.Second, 21 * time.Second, 45 * time.Second, 93 * time.Second}
	if diff := cmp.Diff(want, askedAt); diff != "" {
		t.Fatalf("reads of the failing dashboard at (-want +got):\n%s", diff)
	}
	got := e.rayService(t)
	checkFailing(t, got, rayv1.FailedToGetServeApplications,
		wantRetry("Failed to get the Serve applications of the RayCluster ns/svc-abcde: "+faultErr.Error(), 6, time.Minute, t0.Add(93*time.Second)))
	if reasonOf(got, rayv1.RayServiceReady) != rayv1.RayServiceInitializing {
		t.Fatalf("Ready %s, want Initializing", reasonOf(got, rayv1.RayServiceReady))
	}

	e.serve.SetOpError(url, dashboardtest.OpGetServeDetails, nil)
	e.clock.Step(time.Minute)
	for range 3 {
		e.pass(t)
	}
	if diff := cmp.Diff(map[string]int{newCluster: 1}, e.puts(newCluster)); diff != "" {
		t.Errorf("serve configs PUT (-want +got):\n%s", diff)
	}
	got = e.rayService(t)
	checkRecovered(t, got)
	if got.Status.ActiveServiceStatus.RayClusterName != newCluster {
		t.Errorf("active %q, want %s promoted once it runs the applications", got.Status.ActiveServiceStatus.RayClusterName, newCluster)
	}
}

// TestPendingClusterServeFaults: during a blue/green upgrade, a pending
// cluster whose dashboard fails is not switched to, even though an earlier
// pass saw its applications RUNNING (the operator has no fresh answer);
// the Services stay on the active cluster; once it answers, the Services
// switch and it is promoted.
func TestPendingClusterServeFaults(t *testing.T) {
	newSpec := newVersion()
	rs := noActiveApps(serving(rayService().ClusterSpec(newSpec))).PendingCluster(newCluster).
		PendingApp("app", rayv1.ApplicationStatusRunning). // as an earlier pass saw it
		Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0).Obj()
	objs := append(replace(idleWorld(t, rs), servingCluster(t, rayService().Obj(), active).Obj()),
		servingCluster(t, rs, newCluster).Obj(), headPod(newCluster).Obj())
	e := newEnv(t, objs)
	e.serveRunning(active)
	e.serveRunning(newCluster)
	url := dashboardURL(newCluster)
	faultErr := e.serve.SetFault(url, dashboardtest.OpGetServeDetails, dashboardtest.FaultTimeout)
	for i := range 3 {
		e.pass(t)
		e.clock.Step(DefaultInFlightRequeue)
		got := e.rayService(t)
		if got.Status.PendingServiceStatus.RayClusterName != newCluster || got.Status.ActiveServiceStatus.RayClusterName != active {
			t.Fatalf("pass %d: active %q pending %q, want no promotion", i, got.Status.ActiveServiceStatus.RayClusterName,
				got.Status.PendingServiceStatus.RayClusterName)
		}
		if diff := cmp.Diff(idleServices(), e.serviceStates(t)); diff != "" {
			t.Fatalf("pass %d: Services (-want +got):\n%s", i, diff)
		}
	}
	c := conditions.Get(e.rayService(t).Status.Conditions, rayv1.ServeRequestsFailing)
	if c == nil || c.Reason != string(rayv1.FailedToGetServeApplications) ||
		c.Message != wantRetry("Failed to get the Serve applications of the RayCluster ns/svc-abcde: "+faultErr.Error(), 2, 6*time.Second, t0.Add(4*time.Second)) {
		t.Fatalf("ServeRequestsFailing %+v", c)
	}

	e.serve.SetOpError(url, dashboardtest.OpGetServeDetails, nil)
	e.clock.Step(time.Minute)
	for range 2 {
		e.pass(t)
	}
	got := e.rayService(t)
	if got.Status.ActiveServiceStatus.RayClusterName != newCluster {
		t.Fatalf("active %q, want %s once its dashboard answers", got.Status.ActiveServiceStatus.RayClusterName, newCluster)
	}
	checkRecovered(t, got)
}

// TestTargetCapacityFaults: during an incremental upgrade, a failed PUT of
// the next target_capacity keeps the capacity in status, is KubeRay's
// FailedToUpdateTargetCapacity event and the condition, and is retried
// after the back-off only; once Serve takes it the capacity moves on.
func TestTargetCapacityFaults(t *testing.T) {
	for _, fault := range dashboardtest.Faults {
		t.Run(string(fault), func(t *testing.T) {
			rs := upgrading(incrementalService("new"), 100, 100, 0, 0).Obj()
			e := newEnv(t, append(upgradeWorld(t, rs), readyTrafficObjects(t, rs)...))
			e.serveRunning(active)
			e.serveRunning(pending)
			url := dashboardURL(pending)
			faultErr := e.serve.SetFault(url, dashboardtest.OpUpdateDeployments, fault)
			pendingTC := func() int32 { return *e.rayService(t).Status.PendingServiceStatus.TargetCapacity }
			if faultErr == nil {
				e.pass(t)
				if got := pendingTC(); got != 50 {
					t.Fatalf("%s: pending target capacity %d, want 50", fault, got)
				}
				return
			}
			puts := func() int { return e.serve.Calls(url, dashboardtest.OpUpdateDeployments) }
			e.pass(t)
			checkFailing(t, e.rayService(t), rayv1.FailedToUpdateTargetCapacity,
				wantRetry("Failed to set target_capacity 50 on the RayCluster ns/svc-pending: "+faultErr.Error(), 1, 3*time.Second, t0))
			if !e.hasEvent(reasonFailedToUpdateTargetCapacity) || pendingTC() != 0 || puts() != 1 {
				t.Fatalf("after the failure: capacity %d, %d PUTs, want 0 and 1 and a %s event", pendingTC(), puts(), reasonFailedToUpdateTargetCapacity)
			}
			e.clock.Step(2 * time.Second)
			e.pass(t)
			if puts() != 1 {
				t.Fatalf("%d PUTs inside the back-off", puts()-1)
			}
			e.serve.SetOpError(url, dashboardtest.OpUpdateDeployments, nil)
			e.clock.Step(time.Second)
			e.pass(t)
			if got := pendingTC(); got != 50 || puts() != 2 {
				t.Fatalf("after recovery: capacity %d after %d PUTs, want 50 after 2", got, puts())
			}
			checkRecovered(t, e.rayService(t))
		})
	}
}

// readyTrafficObjects are rs's Gateway and HTTPRoute, accepted and
// programmed, all traffic on the active cluster.
func readyTrafficObjects(t *testing.T, rs *rayv1.RayService) []client.Object {
	t.Helper()
	return trafficObjectsAt(t, rs, 100, 0)
}

// trafficObjectsAt are rs's Gateway and HTTPRoute, accepted and programmed,
// the route's weights given.
func trafficObjectsAt(t *testing.T, rs *rayv1.RayService, activeWeight, pendingWeight int32) []client.Object {
	t.Helper()
	opts, err := incrementalupgrade.OptionsOf(&rs.Spec)
	if err != nil {
		t.Fatal(err)
	}
	gw := incrementalupgrade.Gateway(rs, opts)
	for _, c := range []gwv1.GatewayConditionType{gwv1.GatewayConditionAccepted, gwv1.GatewayConditionProgrammed} {
		gw.Status.Conditions = append(gw.Status.Conditions, metav1.Condition{Type: string(c), Status: metav1.ConditionTrue, Reason: string(c),
			LastTransitionTime: metav1.Time{Time: t0}})
	}
	route := incrementalupgrade.HTTPRoute(rs, []incrementalupgrade.Backend{
		{Service: active + "-serve-svc", Port: 8000, Weight: activeWeight}, {Service: pending + "-serve-svc", Port: 8000, Weight: pendingWeight}})
	parent := gwv1.RouteParentStatus{ParentRef: gwv1.ParentReference{Name: gwv1.ObjectName(gw.Name)}, ControllerName: "example.com/gateway"}
	for _, c := range []gwv1.RouteConditionType{gwv1.RouteConditionAccepted, gwv1.RouteConditionResolvedRefs} {
		parent.Conditions = append(parent.Conditions, metav1.Condition{Type: string(c), Status: metav1.ConditionTrue, Reason: string(c),
			LastTransitionTime: metav1.Time{Time: t0}})
	}
	route.Status.Parents = []gwv1.RouteParentStatus{parent}
	return []client.Object{gw, route}
}

// TestDeletionUnderServeFaults: whatever fails (reads, PUTs and the proxy
// check at once), deleting the RayService deletes its clusters and removes
// its finalizer, and its back-offs are forgotten.
func TestDeletionUnderServeFaults(t *testing.T) {
	for _, fault := range dashboardtest.Faults {
		t.Run(string(fault), func(t *testing.T) {
			e := newEnv(t, idleWorld(t, serving(rayService()).Obj()))
			e.serveRunning(active)
			url := dashboardURL(active)
			if e.serve.SetFault(url, dashboardtest.OpGetServeDetails, fault) == nil {
				t.Fatal("no fault error")
			}
			_ = e.serve.SetFault(url, dashboardtest.OpUpdateDeployments, fault) // nil for garbage: a PUT's answer is not read
			e.unhealthy[activeHead] = dashboardtest.FaultError(t.Context(), fault, dashboardtest.OpServeProxyHealth, "")
			e.pass(t)
			if e.r.serveBackoff.Len() == 0 {
				t.Fatal("no request is backing off")
			}
			if err := e.client.Delete(context.Background(), e.rayService(t)); err != nil {
				t.Fatal(err)
			}
			for i := 0; e.rayService(t) != nil; i++ {
				if i == 3 {
					t.Fatalf("RayService still there after 3 passes, finalizers %v", e.rayService(t).Finalizers)
				}
				e.pass(t)
				e.clock.Step(DefaultInFlightRequeue)
			}
			if len(e.clusterStates(t)) != 0 || e.r.serveBackoff.Len() != 0 {
				t.Errorf("left: clusters %v, %d back-offs", e.clusterStates(t), e.r.serveBackoff.Len())
			}
		})
	}
}

// TestServeFailuresOfClustersNoLongerAsked: a failure is forgotten, and the
// condition turns False, once the pass no longer asks that cluster (here a
// new cluster spec: the active cluster is no longer read during the
// blue/green upgrade).
func TestServeFailuresOfClustersNoLongerAsked(t *testing.T) {
	e := newEnv(t, idleWorld(t, serving(rayService()).Obj()))
	e.serveRunning(active)
	if e.serve.SetFault(dashboardURL(active), dashboardtest.OpGetServeDetails, dashboardtest.FaultRefused) == nil {
		t.Fatal("no fault error")
	}
	e.pass(t)
	if c := conditions.Get(e.rayService(t).Status.Conditions, rayv1.ServeRequestsFailing); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("ServeRequestsFailing %+v after a failure", c)
	}
	editSpec(newVersion())(t, e)
	e.pass(t)
	checkRecovered(t, e.rayService(t))
	if n := e.r.serveBackoff.Len(); n != 0 {
		t.Errorf("%d back-offs remembered", n)
	}
}
