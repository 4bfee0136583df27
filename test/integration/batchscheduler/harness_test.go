// Package batchscheduler_test runs the RayCluster and RayJob controllers
// with each batch scheduler plugin against a real kube-apiserver (envtest)
// that serves the Volcano and scheduler-plugins PodGroup CRDs. No scheduler
// runs: the tests read the PodGroups and the Pods' metadata the operator
// writes, and move Pods and Jobs along through their status.
package batchscheduler_test

import (
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/plugins"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.WithBatchSchedulerCRDs())) }

// world is one test's namespace on the shared API server and an operator
// running the RayCluster and RayJob controllers with one batch scheduler
// plugin, made as internal/operator makes it.
type world struct {
	*testenv.World
	dash  *dashboardtest.Fake
	sched batchscheduler.Scheduler
}

// newWorld starts the operator with the named plugin; gates are set on its
// feature gate.
func newWorld(t *testing.T, scheduler string, gates ...map[string]bool) *world {
	w := &world{World: testenv.NewWorld(t, testenv.Shared(t)), dash: dashboardtest.NewFake()}
	// The RayJob controller polls every 3 s; a RayJob's way to Running
	// takes several polls.
	w.Timeout = 45 * time.Second
	factory, err := plugins.Factory(scheduler)
	if err != nil {
		t.Fatal(err)
	}
	gate := features.NewGate()
	for _, g := range gates {
		if err := gate.SetFromMap(g); err != nil {
			t.Fatal(err)
		}
	}
	clock := clocktesting.NewFakeClock(time.Now())
	testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		if w.sched, err = factory.New(t.Context(), w.Env.Config, mgr.GetClient()); err != nil {
			return err
		}
		rc := raycluster.NewForManager(mgr, raycluster.Deps{Core: managerdeps.Core{Clock: clock}},
			raycluster.Options{BatchScheduler: w.sched, BatchSchedulerFactory: factory, Features: gate})
		if err := rc.SetupWithManager(mgr, 1); err != nil {
			return err
		}
		return rayjob.NewForManager(mgr, rayjob.Deps{Core: managerdeps.Core{Clock: clock}, Dashboards: w.dash.Provider()}, rayjob.Options{
			TransitionGracePeriod: 300 * time.Second, ClusterDomain: "cluster.local", BatchScheduler: w.sched, Features: gate,
		}).SetupWithManager(mgr, 1)
	})
	return w
}

// finishRayJob plays the submitter and the Job controller: the Ray job of
// jobName succeeds and its K8sJobMode submitter Job completes.
func (w *world) finishRayJob(jobName string) {
	w.T.Helper()
	w.Eventually("the Ray job id of "+jobName, func() (bool, error) { return w.RayJob(jobName).Status.JobID != "", nil })
	now := uint64(time.Now().UnixMilli())
	w.dash.AddJob(dashboard.JobInfo{Type: "SUBMISSION", SubmissionID: w.RayJob(jobName).Status.JobID, JobStatus: rayv1.JobStatusSucceeded, StartTime: now, EndTime: now})
	w.FinishJob(jobName, true)
}

// newCluster returns a RayCluster with a head and one worker group "small"
// of replicas Pods (0..10), each Ray container requesting 500m and 1Gi.
func newCluster(name string, replicas int32, labels map[string]string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       *clusterSpec(replicas),
	}
}

func clusterSpec(replicas int32) *rayv1.RayClusterSpec {
	requests := wrappers.Resources("cpu", "500m", "memory", "1Gi")
	return wrappers.MakeRayClusterSpec().RayVersion("2.52.0").
		WorkerGroup("small", replicas, 0, 10).Hosts("small", 1).
		Requests(rayv1.HeadGroupName, requests).Requests("small", requests).Obj()
}

// newRayJob returns a RayJob running on clusterSpec(1).
func newRayJob(name string, mode rayv1.JobSubmissionMode, labels map[string]string) *rayv1.RayJob {
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: rayv1.RayJobSpec{
			Entrypoint:     "python -c 'print(1)'",
			SubmissionMode: mode,
			RayClusterSpec: clusterSpec(1),
		},
	}
}
