package rayservice

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/serveapps"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// t0 is the fake clock's start (never assigned), a whole second so that
// times survive the fake client's JSON round trip unchanged.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	testNS   = "ns"
	testName = "svc"
	// testSuffix is what the injected NameSuffix returns, so a new pending
	// cluster is always newCluster.
	testSuffix = "abcde"
	newCluster = testName + "-" + testSuffix
	// active and pending are the clusters named in the seeded statuses.
	active  = "svc-active"
	pending = "svc-pending"
	// oldCluster is a cluster that no longer serves.
	oldCluster = "svc-old"
	// headSvc and serveSvc are the RayService's Services.
	headSvc  = "svc-head-svc"
	serveSvc = "svc-serve-svc"
	// appliedConfig stands for "the default serve config was applied".
	appliedConfig = wrappers.DefaultServeConfig
)

// testEnv is a Reconciler over a fake client, a fake clock, a ServeFleet,
// a fake Serve proxy check, a fixed name suffix and a FakeRecorder.
type testEnv struct {
	r      *Reconciler
	client client.Client
	clock  *clocktesting.FakeClock
	serve  *dashboardtest.ServeFleet
	events *events.FakeRecorder
	// unhealthy are the head Pods whose Serve proxy fails its check, and
	// the error the check gives.
	unhealthy map[string]error
	// proxyPorts are the ports the proxy of each Pod was checked on, and
	// proxyChecks how many times.
	proxyPorts  map[string]int32
	proxyChecks map[string]int
}

// envConfig is what a case may change before the Reconciler is built.
type envConfig struct {
	opts         Options
	gates        map[featuregate.Feature]bool
	interceptors interceptor.Funcs
}

// envOption changes an envConfig.
type envOption func(*envConfig)

// withOptions changes the Reconciler's Options.
func withOptions(f func(*Options)) envOption { return func(c *envConfig) { f(&c.opts) } }

// withGate sets a feature gate (the others keep their defaults).
func withGate(f featuregate.Feature, on bool) envOption {
	return func(c *envConfig) { c.gates[f] = on }
}

// withInterceptors makes the fake client's calls go through funcs.
func withInterceptors(funcs interceptor.Funcs) envOption {
	return func(c *envConfig) { c.interceptors = funcs }
}

// testScheme knows the core kinds, ray.io/v1 and the Gateway API.
func testScheme(tb testing.TB) *runtime.Scheme {
	tb.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme, gwv1.Install} {
		if err := add(scheme); err != nil {
			tb.Fatal(err)
		}
	}
	return scheme
}

// newEnv builds a testEnv holding objs. By default ENABLE_ZERO_DOWNTIME is
// on (KubeRay's default) and every feature gate has its default.
func newEnv(tb testing.TB, objs []client.Object, opts ...envOption) *testEnv {
	tb.Helper()
	cfg := envConfig{opts: Options{ZeroDowntime: true}, gates: map[featuregate.Feature]bool{}}
	for _, o := range opts {
		o(&cfg)
	}
	gate := features.NewGate()
	if err := gate.SetFromMap(gatesByName(cfg.gates)); err != nil {
		tb.Fatal(err)
	}
	if cfg.opts.Features == nil {
		cfg.opts.Features = gate
	}
	c := fake.NewClientBuilder().WithScheme(testScheme(tb)).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, clusterindex.Pods, clusterindex.ClusterOf).
		WithStatusSubresource(&rayv1.RayService{}, &rayv1.RayCluster{}).
		WithInterceptorFuncs(cfg.interceptors).Build()
	e := &testEnv{
		client:     c,
		clock:      clocktesting.NewFakeClock(t0),
		serve:      dashboardtest.NewServeFleet(),
		events:     events.NewFakeRecorder(100),
		unhealthy:  map[string]error{},
		proxyPorts: map[string]int32{}, proxyChecks: map[string]int{},
	}
	e.r = New(Deps{
		Core: managerdeps.Core{Client: c, Recorder: e.events, Clock: e.clock}, Dashboards: e.serve.Provider(),
		ProxyHealth: e.proxyHealth, NameSuffix: func() string { return testSuffix },
	}, cfg.opts)
	return e
}

func gatesByName(g map[featuregate.Feature]bool) map[string]bool {
	out := map[string]bool{}
	for f, on := range g {
		out[string(f)] = on
	}
	return out
}

// proxyHealth is the fake Serve proxy check: healthy unless unhealthy.
func (e *testEnv) proxyHealth(_ context.Context, pod *corev1.Pod, port int32) error {
	e.proxyPorts[pod.Name] = port
	e.proxyChecks[pod.Name]++
	return e.unhealthy[pod.Name]
}

// reconcile runs one pass over the test RayService.
func (e *testEnv) reconcile(tb testing.TB) (ctrl.Result, error) {
	tb.Helper()
	return e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNS, Name: testName}})
}

// rayService reads the test RayService back; nil once it is gone.
func (e *testEnv) rayService(tb testing.TB) *rayv1.RayService {
	tb.Helper()
	rs := &rayv1.RayService{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: testName}, rs); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		tb.Fatal(err)
	}
	return rs
}

// serveRunning makes Serve on cluster run the default application.
func (e *testEnv) serveRunning(cluster string) {
	e.serve.SetAppStatus(dashboardURL(cluster), "app", rayv1.ApplicationStatusRunning)
}

// recordedEvents drains the events recorded so far.
func (e *testEnv) recordedEvents() []string {
	var out []string
	for {
		select {
		case ev := <-e.events.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// clusterState is what the tests assert about a RayCluster: its name, the
// annotations the controller manages, its worker groups and whether it is
// being deleted.
type clusterState struct {
	Name             string
	DeletionDeadline string
	AppliedConfig    string
	Version          string
	Workers          []string
	Terminating      bool
}

// clusterStates lists the RayClusters of the test namespace by name.
func (e *testEnv) clusterStates(tb testing.TB) []clusterState {
	tb.Helper()
	list := &rayv1.RayClusterList{}
	if err := e.client.List(context.Background(), list, client.InNamespace(testNS)); err != nil {
		tb.Fatal(err)
	}
	var out []clusterState
	for _, c := range list.Items {
		s := clusterState{
			Name:             c.Name,
			DeletionDeadline: c.Annotations[rayv1.AnnotationDeletionDeadline],
			AppliedConfig:    c.Annotations[rayv1.AnnotationAppliedServeConfig],
			Version:          c.Annotations[rayv1.LabelKubeRayVersion],
			Terminating:      !c.DeletionTimestamp.IsZero(),
		}
		for _, g := range c.Spec.WorkerGroupSpecs {
			s.Workers = append(s.Workers, g.GroupName)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b clusterState) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// serviceState is what the tests assert about a Service: the cluster it
// selects and its ClusterIP.
type serviceState struct {
	Name      string
	Cluster   string
	ClusterIP string
}

// serviceStates lists the Services of the test namespace by name.
func (e *testEnv) serviceStates(tb testing.TB) []serviceState {
	tb.Helper()
	list := &corev1.ServiceList{}
	if err := e.client.List(context.Background(), list, client.InNamespace(testNS)); err != nil {
		tb.Fatal(err)
	}
	var out []serviceState
	for i := range list.Items {
		svc := &list.Items[i]
		out = append(out, serviceState{Name: svc.Name, Cluster: clusterowner.SelectedCluster(svc), ClusterIP: svc.Spec.ClusterIP})
	}
	slices.SortFunc(out, func(a, b serviceState) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// serveLabels maps each head Pod of the namespace to its ray.io/serve label.
func (e *testEnv) serveLabels(tb testing.TB) map[string]string {
	tb.Helper()
	list := &corev1.PodList{}
	if err := e.client.List(context.Background(), list, client.InNamespace(testNS)); err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Name] = p.Labels[rayv1.LabelServe]
	}
	return out
}

// puts counts the serve configs PUT on each of clusters.
func (e *testEnv) puts(clusters ...string) map[string]int {
	out := map[string]int{}
	for _, c := range clusters {
		if n := len(e.serve.Configs(dashboardtest.URLFor(c, testNS))); n > 0 {
			out[c] = n
		}
	}
	return out
}

// statusOpts compare RayService statuses: conditions in any order, and the
// embedded RayCluster statuses left out (status_test.go covers them).
func statusOpts() []cmp.Option {
	return []cmp.Option{
		cmpopts.SortSlices(func(a, b metav1.Condition) bool { return a.Type < b.Type }),
		cmpopts.IgnoreFields(rayv1.RayServiceStatus{}, "RayClusterStatus"),
		cmpopts.EquateEmpty(),
	}
}

// ---- fixtures: the world as earlier passes left it ----

// rayService is the test RayService with its finalizer (added by an earlier
// pass), no status.
func rayService() *wrappers.RayServiceWrapper {
	return wrappers.MakeRayService(testName, testNS).Finalizer(rayv1.RayServiceFinalizer)
}

// initializing is the status of a RayService whose first pass ran at at.
func initializing(w *wrappers.RayServiceWrapper, at time.Time) *wrappers.RayServiceWrapper {
	return w.ObservedGeneration(w.RayService.Generation).
		Condition(rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, at).
		Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.RayServiceInitializing, msgInitializing, at)
}

// serving is the status of a Ready RayService whose active cluster runs
// every application and has one serve endpoint, since t0.
func serving(w *wrappers.RayServiceWrapper) *wrappers.RayServiceWrapper {
	return w.ObservedGeneration(w.RayService.Generation).ActiveCluster(active).ActiveApp("app", rayv1.ApplicationStatusRunning).
		NumServeEndpoints(1).ServiceStatus(rayv1.Running).LastUpdateTime(t0).
		Condition(rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints, msgNonZeroEndpoints, t0).
		Condition(rayv1.UpgradeInProgress, metav1.ConditionFalse, rayv1.NoPendingCluster, msgNoPendingCluster, t0)
}

// clusterOf is the cluster the controller made for rs under name, as just
// created: no status yet.
func clusterOf(tb testing.TB, rs *rayv1.RayService, name string) *wrappers.RayClusterWrapper {
	tb.Helper()
	hash, err := clusterowner.SpecHash(&rs.Spec.RayClusterSpec)
	if err != nil {
		tb.Fatal(err)
	}
	return wrappers.MakeRayCluster(name, testNS).Spec(&rs.Spec.RayClusterSpec).OwnedBy(rs, rayv1.KindRayService).
		Annotation(rayv1.LabelHashWithoutReplicas, hash).
		Annotation(rayv1.LabelNumWorkerGroups, strconv.Itoa(len(rs.Spec.RayClusterSpec.WorkerGroupSpecs))).
		Annotation(rayv1.LabelKubeRayVersion, testOperatorVersion)
}

// readyCluster is clusterOf with its head ready, before any serve config
// was applied to it.
func readyCluster(tb testing.TB, rs *rayv1.RayService, name string) *wrappers.RayClusterWrapper {
	tb.Helper()
	return clusterOf(tb, rs, name).State(rayv1.Ready).HeadPodReady()
}

// servingCluster is readyCluster with rs's serve config applied.
func servingCluster(tb testing.TB, rs *rayv1.RayService, name string) *wrappers.RayClusterWrapper {
	tb.Helper()
	return readyCluster(tb, rs, name).Annotation(rayv1.AnnotationAppliedServeConfig, serveapps.Record(rs.Spec.ServeConfigV2))
}

// noActiveApps clears the active cluster's applications in status, as a
// pass does while a new cluster is due.
func noActiveApps(w *wrappers.RayServiceWrapper) *wrappers.RayServiceWrapper {
	w.Status.ActiveServiceStatus.Applications = nil
	return w
}

// headPod is a running, ready head Pod of cluster already in the serve
// Service.
func headPod(cluster string) *wrappers.PodWrapper {
	return wrappers.MakeHeadPod(cluster, testNS).Label(rayv1.LabelServe, "true").RunningReady().IP("10.0.0.1")
}

// service is one of the RayService's Services selecting cluster, with an
// allocated ClusterIP.
func service(name, cluster, ip string) *wrappers.ServiceWrapper {
	return wrappers.MakeService(name, testNS).Selector(rayv1.LabelCluster, cluster).ClusterIP(ip).
		Label(rayv1.LabelOriginatedFromCRName, testName).Label(rayv1.LabelOriginatedFromCRD, rayv1.KindRayService)
}

// endpoints is an EndpointSlice of the serve Service with ready Pods.
func endpoints(name string, podUIDs ...string) *wrappers.EndpointSliceWrapper {
	w := wrappers.MakeEndpointSlice(name, testNS, serveSvc)
	for _, uid := range podUIDs {
		w.Endpoint(uid, true)
	}
	return w
}

// idleWorld is a Ready RayService and everything around it: the active
// cluster with its head, both Services and one serve endpoint. Serve must
// also run the application (serveRunning(active)).
func idleWorld(tb testing.TB, rs *rayv1.RayService) []client.Object {
	tb.Helper()
	return []client.Object{
		rs,
		servingCluster(tb, rs, active).Obj(),
		headPod(active).Obj(),
		service(headSvc, active, "10.96.0.1").Obj(),
		service(serveSvc, active, "10.96.0.2").Obj(),
		endpoints("svc-serve-svc-1", "pod-1").Obj(),
	}
}

// deadline formats a deletion deadline as the controller records it.
func deadline(at time.Time) string { return at.UTC().Format(time.RFC3339) }

// passCase is one Reconcile pass: the world before it, and the world,
// status, events and result after it. Every want is checked; nil wants
// none (no clusters, no Services, no events, no serve config PUT).
type passCase struct {
	objs  []client.Object
	env   []envOption
	setup func(e *testEnv)
	// wantResult and wantErr (a substring; "" for none) are what Reconcile
	// returns.
	wantResult ctrl.Result
	wantErr    string
	// wantStatus is the RayService's status afterwards (nil: the
	// RayService is gone).
	wantStatus *rayv1.RayServiceStatuses
	// wantFinalizers are the RayService's finalizers afterwards.
	wantFinalizers []string
	wantClusters   []clusterState
	wantServices   []serviceState
	wantEvents     []string
	// wantPuts counts the serve configs PUT on each cluster.
	wantPuts map[string]int
	// wantServeLabels, when not nil, are the ray.io/serve labels of the
	// namespace's Pods.
	wantServeLabels map[string]string
}

// runPasses runs each case once through Reconcile and diffs the world.
func runPasses(t *testing.T, cases map[string]passCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, tc.objs, tc.env...)
			if tc.setup != nil {
				tc.setup(e)
			}
			result, err := e.reconcile(t)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Reconcile error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantResult, result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			e.diffWorld(t, tc)
		})
	}
}

// diffWorld compares the world after a pass with a case's wants.
func (e *testEnv) diffWorld(t *testing.T, tc passCase) {
	t.Helper()
	rs := e.rayService(t)
	var gotStatus *rayv1.RayServiceStatuses
	var gotFinalizers []string
	if rs != nil {
		gotStatus, gotFinalizers = &rs.Status, rs.Finalizers
	}
	if diff := cmp.Diff(tc.wantStatus, gotStatus, statusOpts()...); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tc.wantFinalizers, gotFinalizers, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tc.wantClusters, e.clusterStates(t), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tc.wantServices, e.serviceStates(t), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tc.wantEvents, e.recordedEvents(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tc.wantPuts, e.puts(active, pending, newCluster, oldCluster), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("serve configs PUT per cluster (-want +got):\n%s", diff)
	}
	if tc.wantServeLabels != nil {
		if diff := cmp.Diff(tc.wantServeLabels, e.serveLabels(t)); diff != "" {
			t.Errorf("ray.io/serve labels (-want +got):\n%s", diff)
		}
	}
}

// dashboardURL is the dashboard URL of a cluster of the test namespace.
func dashboardURL(cluster string) string { return dashboardtest.URLFor(cluster, testNS) }

// except returns objs without the objects named names.
func except(objs []client.Object, names ...string) []client.Object {
	var out []client.Object
	for _, o := range objs {
		if !slices.Contains(names, o.GetName()) {
			out = append(out, o)
		}
	}
	return out
}

// testOperatorVersion is what the reconciler records in
// ray.io/kuberay-version when its Options give no version.
var testOperatorVersion = buildinfo.Version()
