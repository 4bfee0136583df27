// Package raycluster_test runs the RayCluster controller against a real
// kube-apiserver (envtest). Nothing runs Pods there, so tests move them to
// Running/Ready with testenv.MarkPodsRunningReady, and mark cleanup Jobs
// finished through their status.
package raycluster_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// waitTimeout bounds every wait.
const waitTimeout = 30 * time.Second

// world is one test's namespace on the shared API server, the fake clock
// the operator uses, and the operator itself, which the test can stop and
// start again.
type world struct {
	t     *testing.T
	env   *testenv.Env
	c     client.Client
	ns    string
	clock *clocktesting.FakeClock
	opts  raycluster.Options
	run   testenv.Runner
}

// newWorld starts an operator watching a fresh namespace.
func newWorld(t *testing.T, mutate ...func(*raycluster.Options)) *world {
	env := testenv.Shared(t)
	w := &world{
		t: t, env: env, c: env.Client, ns: env.Namespace(t),
		clock: clocktesting.NewFakeClock(time.Now()),
		opts:  raycluster.Options{GCSFTRedisCleanup: true},
	}
	for _, m := range mutate {
		m(&w.opts)
	}
	w.start()
	t.Cleanup(w.stop)
	return w
}

// start runs a new operator for the namespace, with the operator's own
// cache narrowing (operator.CacheOptions: only Ray Pods and the operator's
// Jobs and Secrets are cached).
func (w *world) start() {
	w.t.Helper()
	mgr, err := ctrl.NewManager(w.env.Config, ctrl.Options{
		Scheme:     w.env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      operator.CacheOptions(w.ns),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	r := raycluster.NewForManager(mgr, raycluster.Deps{Clock: w.clock}, w.opts)
	if err := r.SetupWithManager(mgr, 1); err != nil {
		w.t.Fatal(err)
	}
	w.run.Start(mgr)
}

// stop stops the operator and waits for it to end.
func (w *world) stop() { w.run.Stop() }

// eventually polls cond until it holds or waitTimeout passes.
func (w *world) eventually(what string, cond func() (bool, error)) {
	w.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok && err == nil {
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	w.t.Fatalf("timed out waiting for %s (last error: %v)", what, lastErr)
}

// consistently polls cond for d and fails as soon as it does not hold.
func (w *world) consistently(what string, d time.Duration, cond func() (bool, error)) {
	w.t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok, err := cond(); !ok || err != nil {
			w.t.Fatalf("%s stopped holding (error: %v)", what, err)
		}
	}
}

// newCluster returns a RayCluster with a head and the given worker groups
// of "ray-worker" containers.
func (w *world) newCluster(name string, groups ...rayv1.WorkerGroupSpec) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template:       template("ray-head"),
			},
			WorkerGroupSpecs: groups,
		},
	}
}

func group(name string, replicas int32) rayv1.WorkerGroupSpec {
	return rayv1.WorkerGroupSpec{
		GroupName:      name,
		Replicas:       ptr.To(replicas),
		MinReplicas:    ptr.To[int32](0),
		MaxReplicas:    ptr.To[int32](10),
		RayStartParams: map[string]string{},
		Template:       template("ray-worker"),
	}
}

func template(container string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:  container,
		Image: "rayproject/ray:2.52.0",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("500m"),
			corev1.ResourceMemory: resource.MustParse("1Gi"),
		}},
	}}}}
}

func (w *world) create(obj client.Object) {
	w.t.Helper()
	if err := w.c.Create(context.Background(), obj); err != nil {
		w.t.Fatal(err)
	}
}

// cluster reads a RayCluster; nil once it is gone.
func (w *world) cluster(name string) *rayv1.RayCluster {
	w.t.Helper()
	rc := &rayv1.RayCluster{}
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, rc); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		w.t.Fatal(err)
	}
	return rc
}

// edit applies mutate to the latest RayCluster, retrying on conflicts.
func (w *world) edit(name string, mutate func(*rayv1.RayCluster)) {
	w.t.Helper()
	w.eventually("updating RayCluster "+name, func() (bool, error) {
		rc := w.cluster(name)
		mutate(rc)
		return true, w.c.Update(context.Background(), rc)
	})
}

// pods lists the cluster's Pods with extra labels, sorted by name.
func (w *world) pods(cluster string, extra map[string]string) []corev1.Pod {
	w.t.Helper()
	sel := client.MatchingLabels{rayv1.LabelCluster: cluster}
	for k, v := range extra {
		sel[k] = v
	}
	var list corev1.PodList
	if err := w.c.List(context.Background(), &list, client.InNamespace(w.ns), sel); err != nil {
		w.t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

func headLabels() map[string]string { return map[string]string{rayv1.LabelNodeType: "head"} }

func groupLabels(g string) map[string]string {
	return map[string]string{rayv1.LabelNodeType: "worker", rayv1.LabelGroup: g}
}

// waitPods waits until the cluster has n Pods with extra labels and returns them.
func (w *world) waitPods(cluster string, extra map[string]string, n int) []corev1.Pod {
	w.t.Helper()
	var pods []corev1.Pod
	w.eventually(fmt.Sprintf("%d Pods %v of %s", n, extra, cluster), func() (bool, error) {
		pods = w.pods(cluster, extra)
		return len(pods) == n, nil
	})
	return pods
}

// markReady makes the Pods Running and Ready, as a kubelet would.
func (w *world) markReady(pods []corev1.Pod) {
	w.t.Helper()
	for i := range pods {
		if err := testenv.MarkPodsRunningReady(context.Background(), w.c, &pods[i]); err != nil {
			w.t.Fatal(err)
		}
	}
}

// waitStatus waits until the cluster's status satisfies cond.
func (w *world) waitStatus(name, what string, cond func(*rayv1.RayClusterStatus) bool) *rayv1.RayCluster {
	w.t.Helper()
	var rc *rayv1.RayCluster
	w.eventually(name+": "+what, func() (bool, error) {
		rc = w.cluster(name)
		return rc != nil && cond(&rc.Status), nil
	})
	return rc
}

// waitEvent waits for an event with the given reason about the object.
func (w *world) waitEvent(objName, reason string) corev1.Event {
	w.t.Helper()
	var found corev1.Event
	w.eventually("event "+reason+" about "+objName, func() (bool, error) {
		var list corev1.EventList
		if err := w.c.List(context.Background(), &list, client.InNamespace(w.ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Reason == reason && e.InvolvedObject.Name == objName {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	return found
}
