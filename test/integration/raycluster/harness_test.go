// Package raycluster_test runs the RayCluster controller against a real
// kube-apiserver (envtest). Nothing runs Pods there, so tests move them to
// Running/Ready with testenv.MarkPodsRunningReady, and mark cleanup Jobs
// finished through their status.
package raycluster_test

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.WithCertManagerCRDs())) }

// world is one test's namespace on the shared API server, the fake clock
// the operator uses, and the operator itself, which the test can stop and
// start again.
type world struct {
	*testenv.World
	clock *clocktesting.FakeClock
	op    *testenv.Operator
}

// newWorld starts an operator watching a fresh namespace, with the
// operator's own cache narrowing (operator.CacheOptions: only Ray Pods and
// the operator's Jobs and Secrets are cached).
func newWorld(t *testing.T, mutate ...func(*raycluster.Options)) *world {
	w := &world{World: testenv.NewWorld(t, testenv.Shared(t)), clock: clocktesting.NewFakeClock(time.Now())}
	opts := raycluster.Options{GCSFTRedisCleanup: true, WatchNamespaces: []string{w.NS}}
	for _, m := range mutate {
		m(&opts)
	}
	w.op = testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		return raycluster.NewForManager(mgr, raycluster.Deps{Core: managerdeps.Core{Clock: w.clock}}, opts).SetupWithManager(mgr, 1)
	})
	return w
}

// newCluster returns a RayCluster with a head and the given worker groups.
func (w *world) newCluster(name string, groups ...rayv1.WorkerGroupSpec) *rayv1.RayCluster {
	spec := clusterSpec()
	spec.WorkerGroupSpecs = groups
	return wrappers.MakeRayCluster(name, w.NS).Spec(spec.Obj()).Obj()
}

// group is a worker group of replicas (0 to 10) "ray-worker" Pods.
func group(name string, replicas int32) rayv1.WorkerGroupSpec {
	return clusterSpec().WorkerGroup(name, replicas, 0, 10).Requests(name, requests()).WorkerGroupSpecs[0]
}

// clusterSpec is a spec with a head only; every Ray container of the suite
// runs Ray 2.52.0 and requests 500m and 1Gi.
func clusterSpec() *wrappers.RayClusterSpecWrapper {
	return wrappers.MakeRayClusterSpec().RayVersion("2.52.0").Requests(rayv1.HeadGroupName, requests())
}

func requests() corev1.ResourceList { return wrappers.Resources("cpu", "500m", "memory", "1Gi") }

func headLabels() map[string]string { return map[string]string{rayv1.LabelNodeType: "head"} }

func groupLabels(g string) map[string]string {
	return map[string]string{rayv1.LabelNodeType: "worker", rayv1.LabelGroup: g}
}

// edit applies mutate to the latest RayCluster, retrying on conflicts.
func (w *world) edit(name string, mutate func(*rayv1.RayCluster)) {
	w.T.Helper()
	rc := &rayv1.RayCluster{}
	rc.Name, rc.Namespace = name, w.NS
	w.Update(rc, func() { mutate(rc) })
}

// waitStatus waits until the cluster's status satisfies cond.
func (w *world) waitStatus(name, what string, cond func(*rayv1.RayClusterStatus) bool) *rayv1.RayCluster {
	w.T.Helper()
	var rc *rayv1.RayCluster
	w.Eventually(name+": "+what, func() (bool, error) {
		rc = w.RayCluster(name)
		return rc != nil && cond(&rc.Status), nil
	})
	return rc
}
