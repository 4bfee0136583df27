package rayservice

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestLabelHeadPodForServeStatus covers the head Pod's ray.io/serve label
// (KubeRay's TestLabelHeadPodForServeStatus): excludeHeadPodFromServeSvc ×
// the Serve proxy's health, checked on the head's serve port, written only
// when it changes.
func TestLabelHeadPodForServeStatus(t *testing.T) {
	cases := map[string]struct {
		exclude   bool
		unhealthy bool
		notReady  bool   // the head Pod Running but not Ready
		label     string // before; "" for none
		want      string
		wantEvent string
		// wantFailure is the Warning event of a proxy that failed after it
		// had answered, which also asks for the pass after the back-off.
		wantFailure string
	}{
		"healthy proxy: true": {
			label: "false", want: "true", wantEvent: `Normal UpdatedHeadPodServeLabel Updated the serve label to "true" for the Head Pod ns/svc-active-head`,
		},
		"healthy proxy, no label yet: true": {
			want: "true", wantEvent: `Normal UpdatedHeadPodServeLabel Updated the serve label to "true" for the Head Pod ns/svc-active-head`,
		},
		"unhealthy proxy: false": {
			unhealthy: true, label: "true", want: "false",
			wantEvent: `Normal UpdatedHeadPodServeLabel Updated the serve label to "false" for the Head Pod ns/svc-active-head`,
			wantFailure: "Warning FailedServeProxyHealthCheck The Serve proxy of the head Pod ns/svc-active-head of RayCluster svc-active " +
				"failed its health check: 503 (retrying in 3s, at 2026-01-01T00:00:03Z)",
		},
		"unhealthy proxy that never answered (starting): false, no failure": {
			unhealthy: true, label: "false", want: "false",
		},
		"excluded, healthy proxy: false": {
			exclude: true, label: "true", want: "false",
			wantEvent: `Normal UpdatedHeadPodServeLabel Updated the serve label to "false" for the Head Pod ns/svc-active-head`,
		},
		"excluded, unhealthy proxy: false, unchanged": {
			exclude: true, unhealthy: true, label: "false", want: "false",
		},
		"healthy proxy, already true: unchanged": {
			label: "true", want: "true",
		},
		// A head container restarting after its GCS was killed: the old
		// proxy may still answer, but the new container would turn Ready
		// before its proxy listens.
		"head not Ready, proxy still answering: false, not checked": {
			notReady: true, label: "true", want: "false",
			wantEvent: `Normal UpdatedHeadPodServeLabel Updated the serve label to "false" for the Head Pod ns/svc-active-head`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := serving(rayService())
			if tc.exclude {
				w.ExcludeHeadPodFromServeSvc()
			}
			rs := w.Obj()
			spec := wrappers.MakeRayClusterSpec().HeadPort("serve", 9000).WorkerGroup("small", 1, 0, 3).Obj()
			cluster := servingCluster(t, rayService().ClusterSpec(spec).Obj(), active).Obj()
			head := wrappers.MakeHeadPod(active, testNS).RunningReady()
			if tc.label != "" {
				head.Label(rayv1.LabelServe, tc.label)
			}
			if tc.notReady {
				head.Phase(corev1.PodRunning)
			}
			e := newEnv(t, []client.Object{rs, cluster, head.Obj()})
			if tc.unhealthy {
				e.unhealthy[head.Name] = errors.New("503")
			}
			s := newScope(rs, t0)
			s.active = cluster
			res, err := e.r.reconcileServeLabels(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.serveLabels(t)[head.Name]; got != tc.want {
				t.Errorf("ray.io/serve = %q, want %q", got, tc.want)
			}
			var wantEvents []string
			wantRequeue := time.Duration(0)
			if tc.wantFailure != "" {
				wantEvents, wantRequeue = append(wantEvents, tc.wantFailure), 3*time.Second
			}
			if tc.wantEvent != "" {
				wantEvents = append(wantEvents, tc.wantEvent)
			}
			if diff := cmp.Diff(wantEvents, e.recordedEvents()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			wantPorts := map[string]int32{head.Name: 9000}
			if tc.exclude || tc.notReady {
				wantPorts = map[string]int32{}
			}
			if diff := cmp.Diff(wantPorts, e.proxyPorts); diff != "" {
				t.Errorf("proxy checks by Pod and port (-want +got):\n%s", diff)
			}
			if s.heads[active] == nil || res.RequeueAfter != wantRequeue {
				t.Errorf("head found %v, requeue %v; want the head and requeue %v", s.heads[active] != nil, res.RequeueAfter, wantRequeue)
			}
		})
	}
}

// TestServeLabelWaitsForTheHead checks that a cluster without a head Pod
// (not created yet, or only a terminating one) is waited for, not an
// error that would stop the pass as in KubeRay.
func TestServeLabelWaitsForTheHead(t *testing.T) {
	cases := map[string][]client.Object{
		"no head Pod":             nil,
		"only a terminating head": {headPod(active).Terminating(t0).Obj()},
		"only a worker Pod": {wrappers.MakePod("svc-active-worker", testNS).
			Label(rayv1.LabelCluster, active).Label(rayv1.LabelNodeType, string(rayv1.WorkerNode)).Obj()},
	}
	for name, objs := range cases {
		t.Run(name, func(t *testing.T) {
			rs := serving(rayService()).Obj()
			cluster := servingCluster(t, rs, active).Obj()
			e := newEnv(t, append([]client.Object{rs, cluster}, objs...))
			s := newScope(rs, t0)
			s.active = cluster
			res, err := e.r.reconcileServeLabels(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if s.heads[active] != nil || res.RequeueAfter != DefaultInFlightRequeue {
				t.Errorf("head found %v, requeue %v; want none and %v", s.heads[active] != nil, res.RequeueAfter, DefaultInFlightRequeue)
			}
			if len(e.proxyPorts) != 0 {
				t.Errorf("proxies checked: %v", e.proxyPorts)
			}
		})
	}
}

// TestGetAndCheckServeStatus covers reading a cluster's applications (KubeRay's
// TestGetAndCheckServeStatus): the statuses shown, and a cluster ready to
// serve only when it runs at least one application and all are RUNNING.
func TestGetAndCheckServeStatus(t *testing.T) {
	cases := map[string]struct {
		apps      map[string]string
		wantApps  map[string]rayv1.AppStatus
		wantReady bool
	}{
		"one RUNNING": {
			apps: map[string]string{"app": rayv1.ApplicationStatusRunning}, wantReady: true,
			wantApps: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusRunning}},
		},
		"two RUNNING, one named default by Serve": {
			apps: map[string]string{"app": rayv1.ApplicationStatusRunning, "": rayv1.ApplicationStatusRunning}, wantReady: true,
			wantApps: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusRunning}, "default": {Status: rayv1.ApplicationStatusRunning}},
		},
		"DEPLOYING": {
			apps:     map[string]string{"app": rayv1.ApplicationStatusDeploying},
			wantApps: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusDeploying}},
		},
		"UNHEALTHY": {
			apps:     map[string]string{"app": rayv1.ApplicationStatusUnhealthy},
			wantApps: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusUnhealthy}},
		},
		"DEPLOY_FAILED": {
			apps:     map[string]string{"app": rayv1.ApplicationStatusDeployFailed},
			wantApps: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusDeployFailed}},
		},
		"one RUNNING, one DEPLOYING": {
			apps: map[string]string{"app": rayv1.ApplicationStatusRunning, "b": rayv1.ApplicationStatusDeploying},
			wantApps: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusRunning},
				"b": {Status: rayv1.ApplicationStatusDeploying}},
		},
		"no application": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := serving(rayService()).Obj()
			cluster := servingCluster(t, rs, active).Obj()
			e := newEnv(t, []client.Object{rs, cluster})
			// Serve's applications are set after any PUT so that the case
			// reads exactly them.
			e.serve.SetInitialStatus(rayv1.ApplicationStatusDeploying)
			url := dashboardtest.URLFor(active, testNS)
			for app, status := range tc.apps {
				e.serve.SetAppStatus(url, app, status)
			}
			s := newScope(rs, t0)
			got, err := e.r.serveCluster(context.Background(), s, cluster, true)
			if err != nil {
				t.Fatal(err)
			}
			apps, ready := got.apps, got.ready
			if diff := cmp.Diff(tc.wantApps, apps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("applications (-want +got):\n%s", diff)
			}
			wantRequeue := DefaultInFlightRequeue
			if tc.wantReady {
				wantRequeue = 0
			}
			if ready != tc.wantReady || got.requeue != wantRequeue {
				t.Errorf("ready %t, requeue %v; want %t, %v", ready, got.requeue, tc.wantReady, wantRequeue)
			}
		})
	}
}

// TestCheckIfNeedSubmitServeApplications covers when serveConfigV2 is PUT on
// a cluster (KubeRay's TestCheckIfNeedSubmitServeApplications, with the
// applied config recorded on the cluster as ray.io/applied-serve-config
// rather than in memory): never applied there, another config applied, or
// Serve lost its applications; never for an empty config, and not before
// the head is ready.
func TestCheckIfNeedSubmitServeApplications(t *testing.T) {
	const otherConfig = "applications:\n  - name: other\n    import_path: other:app\n"
	recordedAs := func(config string) *wrappers.RayClusterWrapper {
		return readyCluster(t, rayService().Obj(), active).Annotation(rayv1.AnnotationAppliedServeConfig, config)
	}
	cases := map[string]struct {
		rs        *rayv1.RayService
		cluster   *wrappers.RayClusterWrapper
		head      *corev1.Pod
		env       []envOption
		apps      map[string]string
		wantPuts  int
		wantApply string // the recorded config afterwards
		wantReady bool
	}{
		"nothing recorded: applied and recorded": {
			cluster: readyCluster(t, rayService().Obj(), active), wantPuts: 1, wantApply: appliedConfig,
		},
		"the same config recorded and running: nothing to do": {
			cluster: recordedAs(appliedConfig), apps: map[string]string{"app": rayv1.ApplicationStatusRunning},
			wantApply: appliedConfig, wantReady: true,
		},
		"another config recorded: applied again": {
			cluster: recordedAs(otherConfig), apps: map[string]string{"other": rayv1.ApplicationStatusRunning},
			wantPuts: 1, wantApply: appliedConfig, wantReady: true,
		},
		"the same config recorded but Serve lost its applications: applied again": {
			cluster: recordedAs(appliedConfig), wantPuts: 1, wantApply: appliedConfig,
		},
		"an empty config is never applied": {
			rs:      serving(rayService().ServeConfig("")).Obj(),
			cluster: readyCluster(t, rayService().Obj(), active),
		},
		"head not ready: Serve is not called": {
			cluster: clusterOf(t, rayService().Obj(), active),
		},
		"without RayClusterStatusConditions: a running, ready head Pod is enough": {
			cluster: clusterOf(t, rayService().Obj(), active), head: headPod(active).Obj(),
			env:      []envOption{withGate(features.RayClusterStatusConditions, false)},
			wantPuts: 1, wantApply: appliedConfig,
		},
		"without RayClusterStatusConditions: a pending head Pod is waited for": {
			cluster: readyCluster(t, rayService().Obj(), active), head: headPod(active).Phase(corev1.PodPending).Obj(),
			env: []envOption{withGate(features.RayClusterStatusConditions, false)},
		},
		"without RayClusterStatusConditions: a running head Pod not ready is waited for": {
			cluster: readyCluster(t, rayService().Obj(), active), head: headPod(active).Phase(corev1.PodRunning).Obj(),
			env: []envOption{withGate(features.RayClusterStatusConditions, false)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := tc.rs
			if rs == nil {
				rs = serving(rayService()).Obj()
			}
			cluster := tc.cluster.Obj()
			e := newEnv(t, []client.Object{rs, cluster}, tc.env...)
			for app, status := range tc.apps {
				e.serve.SetAppStatus(dashboardtest.URLFor(active, testNS), app, status)
			}
			s := newScope(rs, t0)
			s.heads[active] = tc.head
			served, err := e.r.serveCluster(context.Background(), s, cluster, true)
			if err != nil {
				t.Fatal(err)
			}
			ready := served.ready
			stored := &rayv1.RayCluster{}
			if err := e.client.Get(context.Background(), client.ObjectKeyFromObject(cluster), stored); err != nil {
				t.Fatal(err)
			}
			got := struct {
				Puts   int
				Record string
				Ready  bool
			}{len(e.serve.Configs(dashboardtest.URLFor(active, testNS))), stored.Annotations[rayv1.AnnotationAppliedServeConfig], ready}
			want := struct {
				Puts   int
				Record string
				Ready  bool
			}{tc.wantPuts, tc.wantApply, tc.wantReady}
			if tc.cluster.Annotations[rayv1.AnnotationAppliedServeConfig] != "" && tc.wantApply == "" {
				want.Record = tc.cluster.Annotations[rayv1.AnnotationAppliedServeConfig]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestServeFailures checks that a failing Serve API is no error of the
// pass (faults_test.go has every fault mode): the status is kept, the
// condition and a Warning say what failed, the pass comes back after the
// back-off; a failed PUT is KubeRay's Warning, and nothing is recorded then.
func TestServeFailures(t *testing.T) {
	boom := errors.New("connection refused")
	rs := serving(rayService()).Obj()
	const failure = "Failed to get the Serve applications of the RayCluster ns/svc-active: connection refused (retrying in 3s, at 2026-01-01T00:00:03Z)"
	runPasses(t, map[string]passCase{
		"Serve unreachable: no error, nothing recorded, the status kept": {
			objs:       replace(idleWorld(t, rs), readyCluster(t, rs, active).Obj()),
			setup:      func(e *testEnv) { e.serve.SetError(dashboardtest.URLFor(active, testNS), boom) },
			wantResult: ctrl.Result{RequeueAfter: 3 * time.Second},
			wantStatus: &serving(rayService()).
				Condition(rayv1.ServeRequestsFailing, metav1.ConditionTrue, rayv1.FailedToGetServeApplications, failure, t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantServices:   idleServices(),
			wantEvents:     []string{"Warning FailedToGetServeApplications " + failure},
		},
	})
	// The GET succeeding and only the PUT failing needs a Serve that
	// answers reads: a dashboard client that refuses updates.
	e := newEnv(t, replace(idleWorld(t, rs), readyCluster(t, rs, active).Obj()))
	s := newScope(rs, t0)
	cluster := readyCluster(t, rs, active).Obj()
	err := e.r.applyServeConfig(context.Background(), s, cluster, refusingApplier{boom}, nil)
	if !errors.Is(err, boom) {
		t.Errorf("error = %v, want %v", err, boom)
	}
	want := []string{"Warning FailedToUpdateServeApplications Failed to update serve applications to the RayCluster ns/svc-active: connection refused"}
	if diff := cmp.Diff(want, e.recordedEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := e.clusterStates(t)[0].AppliedConfig; got != "" {
		t.Errorf("recorded %q after a failed PUT", got)
	}
}

// refusingApplier is a Serve that refuses every config.
type refusingApplier struct{ err error }

func (a refusingApplier) UpdateDeployments(context.Context, []byte) error { return a.err }

// TestServeConfigDecision covers which cluster gets serveConfigV2 when the
// spec changes, through whole passes. A config is never applied to the
// active cluster while a new cluster is due (KubeRay #3423: a new image
// and a new config go together to the new cluster), and the active
// cluster's applications are not shown then; with upgrades that make no
// new cluster the config is applied in place.
func TestServeConfigDecision(t *testing.T) {
	const newConfig = "applications:\n  - name: app\n    import_path: app:v2\n    route_prefix: /\n"
	changed := func() *wrappers.RayServiceWrapper {
		return rayService().ClusterSpec(newVersion()).ServeConfig(newConfig)
	}
	idleOld := func(w *wrappers.RayServiceWrapper) []client.Object {
		return replace(idleWorld(t, serving(w).Obj()), servingCluster(t, rayService().Obj(), active).Obj())
	}
	activeWith := func(config string) clusterState {
		return clusterState{Name: active, AppliedConfig: config, Version: testOperatorVersion, Workers: []string{"small"}}
	}
	runActive := func(e *testEnv) { e.serveRunning(active) }
	upgrading := func(w *wrappers.RayServiceWrapper) *wrappers.RayServiceWrapper {
		return noActiveApps(serving(w)).PendingCluster(newCluster).LastUpdateTime(t0).
			Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0)
	}
	runPasses(t, map[string]passCase{
		"cluster spec and config changed: no config for the active cluster, a new cluster named": {
			objs:           idleOld(changed()),
			setup:          runActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &upgrading(changed()).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeWith(appliedConfig)},
			wantServices:   idleServices(),
		},
		"while the new cluster comes up, it gets the config and the active one does not": {
			objs: append(idleOld(upgrading(changed())),
				readyCluster(t, changed().Obj(), newCluster).Obj(), headPod(newCluster).Obj()),
			setup:          runActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &upgrading(changed()).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters: []clusterState{
				{Name: newCluster, AppliedConfig: newConfig, Version: testOperatorVersion, Workers: []string{"small"}},
				activeWith(appliedConfig),
			},
			wantServices: idleServices(),
			wantEvents:   []string{"Normal UpdatedServeApplications Updated serve applications to the RayCluster ns/svc-abcde"},
			wantPuts:     map[string]int{newCluster: 1},
		},
		"only the config changed: applied to the active cluster in place": {
			objs:           idleOld(rayService().ServeConfig(newConfig)),
			setup:          runActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &serving(rayService().ServeConfig(newConfig)).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeWith(newConfig)},
			wantServices:   idleServices(),
			wantEvents:     []string{"Normal UpdatedServeApplications Updated serve applications to the RayCluster ns/svc-active"},
			wantPuts:       map[string]int{active: 1},
		},
		"upgrade type None: the cluster spec change is ignored, the config applied in place": {
			objs:           idleOld(changed().UpgradeType(rayv1.RayServiceUpgradeNone)),
			setup:          runActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &serving(changed().UpgradeType(rayv1.RayServiceUpgradeNone)).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeWith(newConfig)},
			wantServices:   idleServices(),
			wantEvents:     []string{"Normal UpdatedServeApplications Updated serve applications to the RayCluster ns/svc-active"},
			wantPuts:       map[string]int{active: 1},
		},
		"ENABLE_ZERO_DOWNTIME=false and no type: the same as None": {
			objs:           idleOld(changed()),
			env:            []envOption{withOptions(func(o *Options) { o.ZeroDowntime = false })},
			setup:          runActive,
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &serving(changed()).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{activeWith(newConfig)},
			wantServices:   idleServices(),
			wantEvents:     []string{"Normal UpdatedServeApplications Updated serve applications to the RayCluster ns/svc-active"},
			wantPuts:       map[string]int{active: 1},
		},
	})
}

// TestDashboardURL checks where Serve is reached (KubeRay's
// TestFetchHeadServiceURL): the cluster's head Service in the cluster's
// DNS domain, on the head's dashboard port.
func TestDashboardURL(t *testing.T) {
	cases := map[string]struct {
		spec   *rayv1.RayClusterSpec
		domain string
		want   string
	}{
		"defaults": {spec: wrappers.MakeRayClusterSpec().Obj(), want: "svc-active-head-svc.ns.svc.cluster.local:8265"},
		"a cluster domain": {spec: wrappers.MakeRayClusterSpec().Obj(), domain: "corp.example",
			want: "svc-active-head-svc.ns.svc.corp.example:8265"},
		"a dashboard port": {spec: wrappers.MakeRayClusterSpec().HeadPort("dashboard", 9999).Obj(),
			want: "svc-active-head-svc.ns.svc.cluster.local:9999"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := serving(rayService().ClusterSpec(tc.spec)).Obj()
			cluster := readyCluster(t, rs, active).Obj()
			e := newEnv(t, []client.Object{rs, cluster}, withOptions(func(o *Options) { o.ClusterDomain = tc.domain }))
			if _, err := e.r.serveCluster(context.Background(), newScope(rs, t0), cluster, true); err != nil {
				t.Fatal(err)
			}
			if got := len(e.serve.Configs(tc.want)); got != 1 {
				t.Errorf("%d configs PUT at %s, want 1", got, tc.want)
			}
		})
	}
}

// TestAppliedConfigReadPastAStaleCache hands serveCluster the cluster as a
// lagging cache does right after a pass applied the config: without the
// ray.io/applied-serve-config annotation that pass wrote. The API server
// has it, so the config is not PUT a second time (envtest showed the
// second PUT when passes followed each other closely).
func TestAppliedConfigReadPastAStaleCache(t *testing.T) {
	rs := serving(rayService()).Obj()
	stored := servingCluster(t, rs, active).Obj()
	e := newEnv(t, []client.Object{rs, stored})
	e.serveRunning(active)
	stale := stored.DeepCopy()
	delete(stale.Annotations, rayv1.AnnotationAppliedServeConfig)

	s := newScope(rs, t0)
	got, err := e.r.serveCluster(context.Background(), s, stale, true)
	if err != nil {
		t.Fatal(err)
	}
	ready := got.ready
	if diff := cmp.Diff(map[string]int(nil), e.puts(active), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("serve configs PUT (-want +got):\n%s", diff)
	}
	if !ready {
		t.Error("not ready with every application RUNNING")
	}
	if diff := cmp.Diff([]string(nil), e.recordedEvents(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
