package rayservice

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestStatusChanged covers the status write decision: the whole status is
// compared, except lastUpdateTime and the embedded RayCluster statuses,
// whose changes alone are not written.
func TestStatusChanged(t *testing.T) {
	cases := map[string]struct {
		change func(st *rayv1.RayServiceStatuses)
		want   bool
	}{
		"nothing":        {change: func(*rayv1.RayServiceStatuses) {}},
		"lastUpdateTime": {change: func(st *rayv1.RayServiceStatuses) { st.LastUpdateTime = &metav1.Time{Time: t0.Add(time.Hour)} }},
		"the active cluster's status": {change: func(st *rayv1.RayServiceStatuses) {
			st.ActiveServiceStatus.RayClusterStatus.State = rayv1.Suspended
			st.ActiveServiceStatus.RayClusterStatus.ReadyWorkerReplicas = 7
		}},
		"the pending cluster's status": {change: func(st *rayv1.RayServiceStatuses) {
			st.PendingServiceStatus.RayClusterStatus.AvailableWorkerReplicas = 3
		}},
		"serve endpoints": {change: func(st *rayv1.RayServiceStatuses) { st.NumServeEndpoints = 2 }, want: true},
		"an application status": {change: func(st *rayv1.RayServiceStatuses) {
			st.ActiveServiceStatus.Applications["app"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusDeploying}
		}, want: true},
		"a deployment message": {change: func(st *rayv1.RayServiceStatuses) {
			st.ActiveServiceStatus.Applications["app"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusRunning,
				Deployments: map[string]rayv1.ServeDeploymentStatus{"d": {Status: rayv1.DeploymentStatusHealthy, Message: "m"}}}
		}, want: true},
		"a pending cluster name": {change: func(st *rayv1.RayServiceStatuses) { st.PendingServiceStatus.RayClusterName = pending }, want: true},
		"a condition's message":  {change: func(st *rayv1.RayServiceStatuses) { st.Conditions[0].Message = "other" }, want: true},
		"serviceStatus":          {change: func(st *rayv1.RayServiceStatuses) { st.ServiceStatus = rayv1.NotRunning }, want: true},
		"observedGeneration":     {change: func(st *rayv1.RayServiceStatuses) { st.ObservedGeneration = 2 }, want: true},
		"target capacity":        {change: func(st *rayv1.RayServiceStatuses) { st.ActiveServiceStatus.TargetCapacity = ptr.To[int32](50) }, want: true},
		"traffic routed":         {change: func(st *rayv1.RayServiceStatuses) { st.PendingServiceStatus.TrafficRoutedPercent = ptr.To[int32](10) }, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := serving(rayService()).Obj().Status
			after := before.DeepCopy()
			tc.change(after)
			if got := statusChanged(&before, after); got != tc.want {
				t.Errorf("statusChanged = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestStatusWrite checks the decision through whole passes: a change of
// the clusters' own statuses alone leaves the RayService unwritten, and
// is written with the next real change.
func TestStatusWrite(t *testing.T) {
	rs := serving(rayService()).Obj()
	rs.Status.ActiveServiceStatus.RayClusterStatus.State = rayv1.Ready
	objs := replace(idleWorld(t, rs), servingCluster(t, rs, active).State(rayv1.Suspended).Obj())
	e := newEnv(t, objs)
	e.serveRunning(active)
	before := e.rayService(t)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if got := e.rayService(t); got.ResourceVersion != before.ResourceVersion {
		t.Errorf("a change of the cluster's status alone was written (resourceVersion %s -> %s)", before.ResourceVersion, got.ResourceVersion)
	}
	// A second endpoint is a real change: written, with the cluster's
	// status as it is now.
	if err := e.client.Create(context.Background(), endpoints("svc-serve-svc-2", "pod-2").Obj()); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Minute)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	got := e.rayService(t).Status
	want := struct {
		Endpoints    int32
		ClusterState rayv1.ClusterState
		Updated      time.Time
	}{2, rayv1.Suspended, t0.Add(time.Minute)}
	if diff := cmp.Diff(want, struct {
		Endpoints    int32
		ClusterState rayv1.ClusterState
		Updated      time.Time
	}{got.NumServeEndpoints, got.ActiveServiceStatus.RayClusterStatus.State, got.LastUpdateTime.Time}); diff != "" {
		t.Errorf("written status (-want +got):\n%s", diff)
	}
}

// TestInitializingTimeout covers ray.io/initializing-timeout (KubeRay's
// TestIsInitializingTimeout and TestMarkFailedIfInitializingTimedOut): a
// Go duration or a number of seconds, counted from Ready's transition to
// Initializing; the pass comes back at the deadline; once exceeded the
// cluster names are cleared, Ready is False/InitializingTimeout and a
// Warning says so.
func TestInitializingTimeout(t *testing.T) {
	startedAt := t0.Add(-7 * time.Minute)
	withTimeout := func(timeout string) *wrappers.RayServiceWrapper {
		return rayService().Annotation(rayv1.AnnotationInitializingTimeout, timeout)
	}
	timedOutMsg := func(timeout string) string {
		return fmt.Sprintf("RayService failed to become ready within the configured timeout of %s. Time spent initializing: 7m0s", timeout)
	}
	cases := map[string]struct {
		rs          *wrappers.RayServiceWrapper
		want        *wrappers.RayServiceWrapper
		wantRequeue time.Duration
		wantEvent   string
	}{
		"Go duration, not reached: the pass comes back at the deadline": {
			rs:          initializing(withTimeout("10m"), startedAt).PendingCluster(newCluster),
			want:        initializing(withTimeout("10m"), startedAt).PendingCluster(newCluster),
			wantRequeue: 3 * time.Minute,
		},
		"seconds, not reached": {
			rs:          initializing(withTimeout("600"), startedAt).PendingCluster(newCluster),
			want:        initializing(withTimeout("600"), startedAt).PendingCluster(newCluster),
			wantRequeue: 3 * time.Minute,
		},
		"Go duration, exceeded": {
			rs: initializing(withTimeout("5m"), startedAt).ActiveCluster(active).PendingCluster(newCluster),
			want: initializing(withTimeout("5m"), startedAt).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout, timedOutMsg("5m0s"), startedAt),
			wantEvent: "Warning RayServiceInitializingTimeout " + timedOutMsg("5m0s"),
		},
		"seconds, exceeded": {
			rs: initializing(withTimeout("300"), startedAt).PendingCluster(newCluster),
			want: initializing(withTimeout("300"), startedAt).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout, timedOutMsg("5m0s"), startedAt),
			wantEvent: "Warning RayServiceInitializingTimeout " + timedOutMsg("5m0s"),
		},
		"exactly at the deadline": {
			rs: initializing(withTimeout("7m"), startedAt).PendingCluster(newCluster),
			want: initializing(withTimeout("7m"), startedAt).
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout, timedOutMsg("7m0s"), startedAt),
			wantEvent: "Warning RayServiceInitializingTimeout " + timedOutMsg("7m0s"),
		},
		"no annotation: no timeout": {
			rs:   initializing(rayService(), t0.Add(-24*time.Hour)).PendingCluster(newCluster),
			want: initializing(rayService(), t0.Add(-24*time.Hour)).PendingCluster(newCluster),
		},
		"once Ready, the timeout no longer applies": {
			rs:   readyAt(t0.Add(-time.Hour)).Annotation(rayv1.AnnotationInitializingTimeout, "1m"),
			want: readyAt(t0.Add(-time.Hour)).Annotation(rayv1.AnnotationInitializingTimeout, "1m"),
		},
		"after Ready dropped to zero endpoints, the timeout does not apply either": {
			rs: readyAt(t0.Add(-time.Hour)).Annotation(rayv1.AnnotationInitializingTimeout, "1m").
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, msgZeroEndpoints, t0.Add(-time.Hour)),
			want: readyAt(t0.Add(-time.Hour)).Annotation(rayv1.AnnotationInitializingTimeout, "1m").
				Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints, msgZeroEndpoints, t0.Add(-time.Hour)),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			rs := tc.rs.Obj()
			s := newScope(rs, t0)
			requeue := e.r.timeOutIfInitializingTooLong(s)
			if diff := cmp.Diff(tc.want.Obj().Status, rs.Status, statusOpts()...); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if requeue != tc.wantRequeue {
				t.Errorf("requeue after %v, want %v", requeue, tc.wantRequeue)
			}
			var wantEvents []string
			if tc.wantEvent != "" {
				wantEvents = []string{tc.wantEvent}
			}
			if diff := cmp.Diff(wantEvents, e.recordedEvents()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInitializingTimeoutPasses checks the timeout through whole passes:
// the pass that exceeds it, and the terminal state afterwards, which a
// spec change does not leave and whose clusters are still cleaned up.
func TestInitializingTimeoutPasses(t *testing.T) {
	startedAt := t0.Add(-7 * time.Minute)
	msg := "RayService failed to become ready within the configured timeout of 5m0s. Time spent initializing: 7m0s"
	withTimeout := func() *wrappers.RayServiceWrapper {
		return rayService().Annotation(rayv1.AnnotationInitializingTimeout, "5m")
	}
	// Ready stays False from Initializing to InitializingTimeout, so its
	// transition time stays the start of initializing.
	timedOutStatus := func(w *wrappers.RayServiceWrapper, at time.Time) *wrappers.RayServiceWrapper {
		return initializing(w, at).
			Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout, msg, at)
	}
	stuck := func() *wrappers.RayClusterWrapper { return clusterOf(t, withTimeout().Obj(), newCluster) }
	runPasses(t, map[string]passCase{
		"the pass that exceeds the timeout": {
			objs: []client.Object{initializing(withTimeout(), startedAt).PendingCluster(newCluster).Obj(), stuck().Obj()},
			// Its head not being ready asked for the in-flight interval.
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &timedOutStatus(withTimeout(), startedAt).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			// The next pass gives the cluster its deletion deadline.
			wantClusters: []clusterState{{Name: newCluster, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantEvents:   []string{"Warning RayServiceInitializingTimeout " + msg},
		},
		"before the timeout, with a long in-flight interval: the pass comes back at the deadline": {
			objs:           []client.Object{initializing(withTimeout(), t0.Add(-2*time.Minute)).PendingCluster(newCluster).Obj(), stuck().Obj()},
			env:            []envOption{withOptions(func(o *Options) { o.InFlightRequeue = time.Hour })},
			wantResult:     ctrl.Result{RequeueAfter: 3 * time.Minute},
			wantStatus:     &initializing(withTimeout(), t0.Add(-2*time.Minute)).PendingCluster(newCluster).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: newCluster, Version: testOperatorVersion, Workers: []string{"small"}}},
		},
		"timed out: the forgotten cluster gets its deletion deadline, nothing else happens": {
			objs:           []client.Object{timedOutStatus(withTimeout(), startedAt).Obj(), stuck().Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultClusterDeletionDelay},
			wantStatus:     &timedOutStatus(withTimeout(), startedAt).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters: []clusterState{{Name: newCluster, Version: testOperatorVersion, Workers: []string{"small"},
				DeletionDeadline: deadline(t0.Add(DefaultClusterDeletionDelay))}},
		},
		"timed out, nothing left, the spec fixed: still terminal, no new cluster, no requeue": {
			objs:           []client.Object{timedOutStatus(withTimeout().ClusterSpec(newVersion()).Generation(2), startedAt).Obj()},
			wantStatus:     &timedOutStatus(withTimeout().ClusterSpec(newVersion()).Generation(2), startedAt).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
	})
}

// TestCountServeEndpoints checks the count of serve endpoints: distinct
// ready Pods over every EndpointSlice of the serve Service, nothing else.
func TestCountServeEndpoints(t *testing.T) {
	notReady := wrappers.MakeEndpointSlice("svc-serve-svc-3", testNS, serveSvc).Endpoint("pod-3", false).Obj()
	noTarget := wrappers.MakeEndpointSlice("svc-serve-svc-4", testNS, serveSvc).Obj()
	noTarget.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"10.1.1.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}
	unknownReadiness := wrappers.MakeEndpointSlice("svc-serve-svc-5", testNS, serveSvc).Obj()
	unknownReadiness.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"10.1.1.2"}, TargetRef: &corev1.ObjectReference{UID: "pod-5"}}}
	cases := map[string]struct {
		rs   *rayv1.RayService
		objs []client.Object
		want int32
	}{
		"none": {want: 0},
		"two Pods in two slices, one of them twice (dual stack)": {
			objs: []client.Object{endpoints("a", "pod-1", "pod-2").Obj(), endpoints("b", "pod-1").Obj()}, want: 2,
		},
		"not ready and unknown readiness do not count": {
			objs: []client.Object{endpoints("a", "pod-1").Obj(), notReady, unknownReadiness}, want: 1,
		},
		"an endpoint without a Pod counts by its address": {
			objs: []client.Object{endpoints("a", "pod-1").Obj(), noTarget}, want: 2,
		},
		"other Services' slices do not count": {
			objs: []client.Object{wrappers.MakeEndpointSlice("x", testNS, headSvc).Endpoint("pod-9", true).Obj(),
				wrappers.MakeEndpointSlice("y", "elsewhere", serveSvc).Endpoint("pod-8", true).Obj()},
			want: 0,
		},
		"a custom serve Service's slices count": {
			rs:   rayService().ServeService(wrappers.MakeService("custom", "").Obj()).Obj(),
			objs: []client.Object{wrappers.MakeEndpointSlice("c", testNS, "custom").Endpoint("pod-1", true).Obj(), endpoints("a", "pod-2").Obj()},
			want: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := tc.rs
			if rs == nil {
				rs = rayService().Obj()
			}
			e := newEnv(t, tc.objs)
			got, err := e.r.countServeEndpoints(context.Background(), newScope(rs, t0))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("serve endpoints = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestRequeuePolicy covers when a pass asks to come back: at the in-flight
// interval while anything is under way, at the idle interval once the
// RayService is idle (Ready, every application RUNNING, no pending
// cluster) or timed out, and sooner when a step asked for it.
func TestRequeuePolicy(t *testing.T) {
	opts := Options{InFlightRequeue: 3 * time.Second, IdleRequeue: 5 * time.Minute}
	cases := map[string]struct {
		rs          *rayv1.RayService
		activeReady bool
		earlier     time.Duration // a step's earlier request (0: none)
		want        time.Duration
	}{
		"idle":                                 {rs: serving(rayService()).Obj(), activeReady: true, want: 5 * time.Minute},
		"idle, a step asked for sooner":        {rs: serving(rayService()).Obj(), activeReady: true, earlier: 20 * time.Second, want: 20 * time.Second},
		"a pending cluster":                    {rs: serving(rayService()).PendingCluster(pending).Obj(), activeReady: true, want: 3 * time.Second},
		"no active cluster":                    {rs: initializing(rayService(), t0).PendingCluster(newCluster).Obj(), want: 3 * time.Second},
		"applications not all running":         {rs: serving(rayService()).Obj(), want: 3 * time.Second},
		"no serve endpoint":                    {rs: serving(rayService()).NumServeEndpoints(0).Obj(), activeReady: true, want: 3 * time.Second},
		"timed out: nothing in flight anymore": {rs: timedOut(t0).Obj(), want: 5 * time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := New(Deps{}, opts)
			s := newScope(tc.rs, t0)
			s.activeReady = tc.activeReady
			// The pass merges a step's earlier request with this one.
			requeue := passsteps.Sooner(tc.earlier, r.requeueForStatus(s))
			if requeue != tc.want {
				t.Errorf("requeue after %v, want %v", requeue, tc.want)
			}
		})
	}
}

// TestPromote checks that a blue/green upgrade promotes the pending
// cluster exactly when the Services select it.
func TestPromote(t *testing.T) {
	for _, serving := range []string{active, pending, ""} {
		t.Run("Services select "+serving, func(t *testing.T) {
			rs := readyAt(t0).PendingCluster(pending).PendingApp("app", rayv1.ApplicationStatusRunning).Obj()
			s := newScope(rs, t0)
			s.servingCluster, s.pendingReady = serving, true
			s.active, s.pending = wrappers.MakeRayCluster(active, testNS).Obj(), wrappers.MakeRayCluster(pending, testNS).Obj()
			New(Deps{}, Options{}).promote(s)
			got := []string{rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName, s.active.Name}
			want := []string{active, pending, active}
			if serving == pending {
				want = []string{pending, "", pending}
				if s.pending != nil || !s.activeReady || rs.Status.ActiveServiceStatus.Applications["app"].Status != rayv1.ApplicationStatusRunning {
					t.Errorf("after promotion: pending %v, activeReady %t, active apps %v", s.pending, s.activeReady, rs.Status.ActiveServiceStatus.Applications)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("active, pending in status, active in scope (-want +got):\n%s", diff)
			}
		})
	}
}
