package rayjob_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Main(m))
}

// waitTimeout bounds every wait; the controller polls every 3 seconds.
const waitTimeout = 30 * time.Second

// world is one test's namespace on the shared API server, the fake
// dashboard and clock the operator uses, and the operator itself, which the
// test can stop and start again.
type world struct {
	t     *testing.T
	env   *testenv.Env
	c     client.Client
	ns    string
	dash  *dashboardtest.Fake
	clock *clocktesting.FakeClock
	opts  rayjob.Options
	// operatorCache makes the manager cache what the operator's does
	// (operator.CacheOptions) instead of everything in the namespace.
	operatorCache bool
	run           testenv.Runner
}

// newWorld starts an operator watching a fresh namespace.
func newWorld(t *testing.T, mutate ...func(*rayjob.Options)) *world {
	return startWorld(t, false, mutate...)
}

// newWorldWithOperatorCache is newWorld with the operator's cache scoping
// (operator.CacheOptions).
func newWorldWithOperatorCache(t *testing.T) *world {
	return startWorld(t, true)
}

func startWorld(t *testing.T, operatorCache bool, mutate ...func(*rayjob.Options)) *world {
	env := testenv.Shared(t)
	gate := features.NewGate()
	if err := gate.SetFromMap(map[string]bool{string(features.RayJobDeletionPolicy): true}); err != nil {
		t.Fatal(err)
	}
	w := &world{
		t: t, env: env, c: env.Client, ns: env.Namespace(t),
		dash:  dashboardtest.NewFake(),
		clock: clocktesting.NewFakeClock(time.Now()),
		opts:  rayjob.Options{TransitionGracePeriod: 300 * time.Second, Features: gate, ClusterDomain: "cluster.local"},

		operatorCache: operatorCache,
	}
	for _, m := range mutate {
		m(&w.opts)
	}
	w.start()
	t.Cleanup(w.stop)
	return w
}

// start runs a new operator (manager and RayJob reconciler) for the namespace.
func (w *world) start() {
	w.t.Helper()
	cacheOpts := cache.Options{DefaultNamespaces: map[string]cache.Config{w.ns: {}}}
	if w.operatorCache {
		cacheOpts = operator.CacheOptions(w.ns)
	}
	mgr, err := ctrl.NewManager(w.env.Config, ctrl.Options{
		Scheme:     w.env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cacheOpts,
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	r := rayjob.NewForManager(mgr, rayjob.Deps{Clock: w.clock, Dashboards: w.dash.Provider()}, w.opts)
	if err := r.SetupWithManager(mgr, 1); err != nil {
		w.t.Fatal(err)
	}
	w.run.Start(mgr)
}

// stop stops the operator and waits for it to end.
func (w *world) stop() { w.run.Stop() }

// restart stops the operator and starts a new one, as a crashed and
// rescheduled operator Pod would.
func (w *world) restart() {
	w.stop()
	w.start()
}

// eventually polls cond until it holds or waitTimeout passes.
func (w *world) eventually(what string, cond func() (bool, error)) {
	w.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	w.t.Fatalf("timed out waiting for %s (last error: %v)", what, lastErr)
}

// job reads a RayJob; nil once it is gone.
func (w *world) job(name string) *rayv1.RayJob {
	w.t.Helper()
	job := &rayv1.RayJob{}
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, job); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		w.t.Fatal(err)
	}
	return job
}

// waitFor waits for the RayJob to reach a deployment status and returns it.
func (w *world) waitFor(name string, status rayv1.JobDeploymentStatus) *rayv1.RayJob {
	w.t.Helper()
	var job *rayv1.RayJob
	w.eventually(fmt.Sprintf("RayJob %s to be %q", name, status), func() (bool, error) {
		job = w.job(name)
		if job == nil {
			return false, fmt.Errorf("RayJob %s is gone", name)
		}
		return job.Status.JobDeploymentStatus == status, fmt.Errorf("status %q reason %q: %s",
			job.Status.JobDeploymentStatus, job.Status.Reason, job.Status.Message)
	})
	return job
}

// create creates obj in the test namespace.
func (w *world) create(obj client.Object) {
	w.t.Helper()
	obj.SetNamespace(w.ns)
	if err := w.c.Create(context.Background(), obj); err != nil {
		w.t.Fatal(err)
	}
}

// update re-reads obj, applies mutate and writes it (status too when
// status is set), retrying on conflicts.
func (w *world) update(obj client.Object, status bool, mutate func()) {
	w.t.Helper()
	w.eventually("update of "+obj.GetName(), func() (bool, error) {
		if err := w.c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		mutate()
		var err error
		if status {
			err = w.c.Status().Update(context.Background(), obj)
		} else {
			err = w.c.Update(context.Background(), obj)
		}
		return err == nil, err
	})
}

// clusters lists the RayClusters of the namespace.
func (w *world) clusters() []rayv1.RayCluster {
	w.t.Helper()
	list := &rayv1.RayClusterList{}
	if err := w.c.List(context.Background(), list, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	return list.Items
}

// submitterJobs lists the batch Jobs of the namespace.
func (w *world) submitterJobs() []batchv1.Job {
	w.t.Helper()
	list := &batchv1.JobList{}
	if err := w.c.List(context.Background(), list, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	return list.Items
}

// makeClusterReady plays the RayCluster controller for cluster name: it
// creates the head Service and marks the cluster ready.
func (w *world) makeClusterReady(name string) {
	w.t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-head-svc"},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{rayv1.LabelCluster: name, rayv1.LabelNodeType: string(rayv1.HeadNode)},
			Ports:     []corev1.ServicePort{{Name: rayv1.DashboardPortName, Port: rayv1.DefaultDashboardPort}},
		},
	}
	w.create(svc)
	cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}}
	w.update(cluster, true, func() { cluster.Status.State = rayv1.Ready })
}

// clusterOf waits until the RayJob's cluster exists and returns it.
func (w *world) clusterOf(jobName string) *rayv1.RayCluster {
	w.t.Helper()
	cluster := &rayv1.RayCluster{}
	w.eventually("the RayCluster of "+jobName, func() (bool, error) {
		job := w.job(jobName)
		if job == nil || job.Status.RayClusterName == "" {
			return false, nil
		}
		err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: job.Status.RayClusterName}, cluster)
		return err == nil, err
	})
	return cluster
}

// finishSubmitter plays the Job controller: the submitter Job of jobName
// completes (or fails).
func (w *world) finishSubmitter(jobName string, succeeded bool) {
	w.t.Helper()
	batchJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: jobName, Namespace: w.ns}}
	now := metav1.Now()
	w.update(batchJob, true, func() {
		batchJob.Status.StartTime = &now
		if succeeded {
			batchJob.Status.CompletionTime = &now
			batchJob.Status.Succeeded = 1
			batchJob.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			}
			return
		}
		batchJob.Status.Failed = 3
		batchJob.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
		}
	})
}

// rayJob returns a RayJob named name with a small cluster spec.
func rayJob(name string, mode rayv1.JobSubmissionMode, mutate ...func(*rayv1.RayJob)) *rayv1.RayJob {
	container := func(n string) []corev1.Container {
		return []corev1.Container{{Name: n, Image: "rayproject/ray:2.9.0"}}
	}
	job := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rayv1.RayJobSpec{
			Entrypoint:     "python -c 'print(1)'",
			SubmissionMode: mode,
			RayClusterSpec: &rayv1.RayClusterSpec{
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{},
					Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container("ray-head")}},
				},
				WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
					GroupName: "small", Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](1),
					RayStartParams: map[string]string{},
					Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container("ray-worker")}},
				}},
			},
		},
	}
	for _, m := range mutate {
		m(job)
	}
	return job
}

// rayJobStatus waits until the fake dashboard knows the RayJob's Ray job
// and sets its status.
func (w *world) setRayJobStatus(jobName string, status rayv1.JobStatus) {
	w.t.Helper()
	w.eventually("the Ray job of "+jobName, func() (bool, error) {
		job := w.job(jobName)
		return job != nil && job.Status.JobID != "" && w.dash.SetJobStatus(job.Status.JobID, status, "set by test"), nil
	})
}
