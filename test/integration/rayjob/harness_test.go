// Package rayjob_test runs the RayJob controller against a real
// kube-apiserver and etcd (envtest) with in-process Ray dashboards: the
// deployment states, submission modes, deadlines, deletion policies, cluster
// selectors, faults and restarts, asserting the resulting objects, statuses
// and events.
package rayjob_test

import (
	"os"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// world is one test's namespace on the shared API server, the fake
// dashboard and clock the operator uses, and the operator itself, which the
// test can stop and start again.
type world struct {
	*testenv.World
	dash  *dashboardtest.Fake
	clock *clocktesting.FakeClock
	op    *testenv.Operator
	// dashboards, when set before the operator starts, replaces
	// dash.Provider.
	dashboards dashboard.ClientProvider
}

// newWorld starts an operator watching a fresh namespace.
func newWorld(t *testing.T, mutate ...func(*rayjob.Options)) *world {
	w := emptyWorld(t)
	w.startRayJob(cache.Options{DefaultNamespaces: map[string]cache.Config{w.NS: {}}}, mutate...)
	return w
}

// newWorldWithOperatorCache is newWorld with the operator's cache scoping
// (operator.CacheOptions) instead of everything in the namespace.
func newWorldWithOperatorCache(t *testing.T) *world {
	w := emptyWorld(t)
	w.startRayJob(operator.CacheOptions(w.NS))
	return w
}

// emptyWorld is a fresh namespace with a fake dashboard and clock, and no
// operator yet.
func emptyWorld(t *testing.T) *world {
	clock := clocktesting.NewFakeClock(time.Now())
	return &world{World: testenv.NewWorld(t, testenv.Shared(t)), dash: dashboardtest.NewFakeWithClock(clock), clock: clock}
}

// startRayJob starts an operator running the RayJob reconciler with the
// test's options (RayJobDeletionPolicy on).
func (w *world) startRayJob(cacheOpts cache.Options, mutate ...func(*rayjob.Options)) {
	w.T.Helper()
	gate := features.NewGate()
	if err := gate.SetFromMap(map[string]bool{string(features.RayJobDeletionPolicy): true}); err != nil {
		w.T.Fatal(err)
	}
	opts := rayjob.Options{TransitionGracePeriod: 300 * time.Second, Features: gate, ClusterDomain: "cluster.local"}
	for _, m := range mutate {
		m(&opts)
	}
	w.op = testenv.StartOperator(w.T, w.Env, cacheOpts, func(mgr manager.Manager) error {
		dashboards := w.dashboards
		if dashboards == nil {
			dashboards = w.dash.Provider()
		}
		return rayjob.NewForManager(mgr, rayjob.Deps{Core: managerdeps.Core{Clock: w.clock}, Dashboards: dashboards}, opts).SetupWithManager(mgr, 1)
	})
}

// clusters lists the RayClusters of the namespace.
func (w *world) clusters() []rayv1.RayCluster {
	w.T.Helper()
	list := &rayv1.RayClusterList{}
	w.List(list)
	return list.Items
}

// submitterJobs lists the batch Jobs of the namespace.
func (w *world) submitterJobs() []batchv1.Job {
	w.T.Helper()
	list := &batchv1.JobList{}
	w.List(list)
	return list.Items
}

// makeClusterReady plays the RayCluster controller for cluster name: it
// creates the head Service and marks the cluster ready.
func (w *world) makeClusterReady(name string) {
	w.T.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-head-svc"},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{rayv1.LabelCluster: name, rayv1.LabelNodeType: string(rayv1.HeadNode)},
			Ports:     []corev1.ServicePort{{Name: rayv1.DashboardPortName, Port: rayv1.DefaultDashboardPort}},
		},
	}
	w.Create(svc)
	cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS}}
	w.UpdateStatus(cluster, func() { cluster.Status.State = rayv1.Ready })
}

// rayJob returns a RayJob named name on a small cluster: a head and one
// worker group "small" (1 replica, 0 to 1), images rayproject/ray:2.9.0 and
// no rayVersion.
func rayJob(name string, mode rayv1.JobSubmissionMode, mutate ...func(*rayv1.RayJob)) *rayv1.RayJob {
	cluster := wrappers.MakeRayClusterSpec().RayVersion("2.9.0").WorkerGroup("small", 1, 0, 1).Obj()
	cluster.RayVersion = ""
	job := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       rayv1.RayJobSpec{Entrypoint: "python -c 'print(1)'", SubmissionMode: mode, RayClusterSpec: cluster},
	}
	for _, m := range mutate {
		m(job)
	}
	return job
}

// setRayJobStatus waits until the fake dashboard knows the RayJob's Ray job
// and sets its status (a terminal one ends the job at the world's clock).
func (w *world) setRayJobStatus(jobName string, status rayv1.JobStatus) {
	w.T.Helper()
	w.Eventually("the Ray job of "+jobName, func() (bool, error) {
		job := w.RayJob(jobName)
		return job != nil && job.Status.JobID != "" && w.dash.SetJobStatus(job.Status.JobID, status, "set by test"), nil
	})
}
