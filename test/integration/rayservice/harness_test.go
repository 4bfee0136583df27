// Package rayservice_test runs the RayService controller against a real
// kube-apiserver and etcd (envtest) with in-process Ray dashboards: serving,
// blue/green and incremental upgrades, suspension, the initializing timeout,
// validation, faults and restarts.
package rayservice_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/rayservice"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.WithGatewayAPI())) }

// world is one test's namespace on the shared API server, the fakes the
// operator talks to (Serve on every cluster, the proxy health of head Pods,
// the clock, cluster-name suffixes), and the operator itself, which the
// test can stop and start again.
type world struct {
	*testenv.World
	// t, env, c and ns are the World's T, Env, Client and NS under the
	// names the suite's tests use.
	t     *testing.T
	env   *testenv.Env
	c     client.Client
	ns    string
	serve *dashboardtest.ServeFleet
	clock *clocktesting.FakeClock
	opts  rayservice.Options
	op    *testenv.Operator
	// dashboards, when set before a (re)start, replaces serve.Provider.
	dashboards dashboard.ClientProvider

	mu        sync.Mutex
	unhealthy map[string]bool // head Pods whose Serve proxy fails
	suffixes  []string
	// cache is the running operator's informer cache, which its passes
	// read (set on every start).
	cache client.Reader
}

// newWorld starts an operator for a fresh namespace; mutate adjusts its
// options first.
func newWorld(t *testing.T, mutate ...func(*rayservice.Options)) *world {
	tw := testenv.NewWorld(t, testenv.Shared(t))
	w := &world{
		World: tw, t: t, env: tw.Env, c: tw.Client, ns: tw.NS,
		serve:     dashboardtest.NewServeFleet(),
		clock:     clocktesting.NewFakeClock(time.Now()),
		unhealthy: map[string]bool{},
		opts: rayservice.Options{
			ZeroDowntime: true, ClusterDomain: "cluster.local", Features: features.NewGate(),
			InFlightRequeue: 200 * time.Millisecond, IdleRequeue: 500 * time.Millisecond,
		},
	}
	for _, m := range mutate {
		m(&w.opts)
	}
	// The operator's cache scoping; each start reads the options anew.
	w.op = testenv.StartOperator(t, w.env, operator.CacheOptions(w.ns), func(mgr manager.Manager) error {
		w.mu.Lock()
		w.cache = mgr.GetCache()
		w.mu.Unlock()
		dashboards := w.dashboards
		if dashboards == nil {
			dashboards = w.serve.Provider()
		}
		return rayservice.NewForManager(mgr, rayservice.Deps{
			Core: managerdeps.Core{Clock: w.clock}, Dashboards: dashboards, ProxyHealth: w.proxyHealth, NameSuffix: w.nextSuffix,
		}, w.opts).SetupWithManager(mgr, 1)
	})
	return w
}

func (w *world) start() { w.op.Start() }

// waitCached waits until the operator's cache holds generation gen (or a
// later one) of RayService name: a pass that starts then reads that spec.
func (w *world) waitCached(name string, gen int64) {
	w.t.Helper()
	w.mu.Lock()
	c := w.cache
	w.mu.Unlock()
	w.eventually("generation "+strconv.FormatInt(gen, 10)+" of "+name+" in the operator's cache", func() (bool, error) {
		rs := &rayv1.RayService{}
		if err := c.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: name}, rs); err != nil {
			return false, err
		}
		return rs.Generation >= gen, fmt.Errorf("generation %d cached", rs.Generation)
	})
}

func (w *world) stop() { w.op.Stop() }

// restart stops the operator and starts a new one with empty caches, as a
// crashed and rescheduled operator Pod would.
func (w *world) restart() { w.op.Restart() }

// proxyHealth is the Serve proxy of every head Pod: healthy unless the test
// said otherwise.
func (w *world) proxyHealth(_ context.Context, pod *corev1.Pod, _ int32) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unhealthy[pod.Name] {
		return fmt.Errorf("serve proxy health check GET http://%s:8000/-/healthz: 503 Service Unavailable", pod.Name)
	}
	return nil
}

// nextSuffix hands out cluster-name suffixes "aaaaa", "bbbbb", ...
func (w *world) nextSuffix() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := string(rune('a' + len(w.suffixes)))
	s = s + s + s + s + s
	w.suffixes = append(w.suffixes, s)
	return s
}

// eventually polls cond until it holds or the World's Timeout passes.
func (w *world) eventually(what string, cond func() (bool, error)) {
	w.t.Helper()
	w.Eventually(what, cond)
}

// create creates obj in the test namespace.
func (w *world) create(obj client.Object) {
	w.t.Helper()
	w.Create(obj)
}

// update re-reads obj, applies mutate and writes it (its status when status
// is set), retrying on conflicts.
func (w *world) update(obj client.Object, status bool, mutate func()) {
	w.t.Helper()
	if status {
		w.UpdateStatus(obj, mutate)
		return
	}
	w.Update(obj, mutate)
}

// rs reads a RayService; nil once it is gone.
func (w *world) rs(name string) *rayv1.RayService {
	w.t.Helper()
	return testenv.GetOrNil(w.World, name, &rayv1.RayService{})
}

// waitStatus waits until the RayService's status satisfies ok.
func (w *world) waitStatus(name, what string, ok func(*rayv1.RayServiceStatuses) bool) *rayv1.RayService {
	w.t.Helper()
	var rs *rayv1.RayService
	w.eventually(fmt.Sprintf("RayService %s: %s", name, what), func() (bool, error) {
		rs = w.rs(name)
		if rs == nil {
			return false, fmt.Errorf("gone")
		}
		return ok(&rs.Status), fmt.Errorf("status %+v", rs.Status)
	})
	return rs
}

// cluster reads a RayCluster; nil when it does not exist.
func (w *world) cluster(name string) *rayv1.RayCluster {
	w.t.Helper()
	return w.RayCluster(name)
}

// waitCluster waits until a RayCluster exists and returns it.
func (w *world) waitCluster(name string) *rayv1.RayCluster {
	w.t.Helper()
	var c *rayv1.RayCluster
	w.eventually("RayCluster "+name, func() (bool, error) {
		c = w.cluster(name)
		return c != nil, nil
	})
	return c
}

// clusterNames lists the RayClusters of the namespace that are not being
// deleted.
func (w *world) clusterNames() []string {
	w.t.Helper()
	list := &rayv1.RayClusterList{}
	w.List(list)
	var names []string
	for _, c := range list.Items {
		if c.DeletionTimestamp.IsZero() {
			names = append(names, c.Name)
		}
	}
	return names
}

// service reads a Service; nil when it does not exist.
func (w *world) service(name string) *corev1.Service {
	w.t.Helper()
	return testenv.GetOrNil(w.World, name, &corev1.Service{})
}

// bringUp plays the RayCluster controller for a cluster: a running, ready
// head Pod "<cluster>-head", and the HeadPodReady condition.
func (w *world) bringUp(clusterName string) {
	w.t.Helper()
	w.newHeadPod(clusterName, clusterName+"-head")
	cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: w.ns}}
	w.update(cluster, true, func() {
		cluster.Status.State = rayv1.Ready
		meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
			Type: string(rayv1.HeadPodReady), Status: metav1.ConditionTrue, Reason: "HeadPodRunningAndReady",
		})
	})
}

// markRunningReady plays the kubelet for a Pod.
func (w *world) markRunningReady(pod *corev1.Pod) {
	w.t.Helper()
	w.MarkRunningReady(pod)
}

// publishEndpoints plays the EndpointSlice controller for a Service with n
// made-up ready endpoints (see syncEndpoints for endpoints of real Pods).
func (w *world) publishEndpoints(svcName string, n int) {
	w.t.Helper()
	svc := w.service(svcName)
	if svc == nil {
		w.t.Fatalf("Service %s does not exist", svcName)
	}
	endpoints := make([]discoveryv1.Endpoint, 0, n)
	for i := range n {
		endpoints = append(endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.1.0.%d", i+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", UID: types.UID(fmt.Sprintf("%s-pod-%d", svcName, i))},
		})
	}
	w.putEndpointSlice(svc, endpoints)
}

// conditionOf returns a RayService condition's status and reason.
func conditionOf(st *rayv1.RayServiceStatuses, t rayv1.RayServiceConditionType) (metav1.ConditionStatus, string) {
	c := meta.FindStatusCondition(st.Conditions, string(t))
	if c == nil {
		return "", ""
	}
	return c.Status, c.Reason
}

// rayService returns a RayService with a small cluster and one application
// (wrappers.MakeRayService's, with what the API server sets left unset).
func rayService(name string, mutate ...func(*rayv1.RayService)) *rayv1.RayService {
	rs := wrappers.MakeRayService(name, "").Obj()
	rs.UID, rs.Generation = "", 0
	for _, m := range mutate {
		m(rs)
	}
	return rs
}
