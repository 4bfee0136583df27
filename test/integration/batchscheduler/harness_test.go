// Package batchscheduler_test runs the RayCluster and RayJob controllers
// with each batch scheduler plugin against a real kube-apiserver (envtest)
// that serves the Volcano and scheduler-plugins PodGroup CRDs. No scheduler
// runs: the tests read the PodGroups and the Pods' metadata the operator
// writes, and move Pods and Jobs along through their status.
package batchscheduler_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/plugins"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Main(m, testenv.WithBatchSchedulerCRDs()))
}

// waitTimeout bounds every wait; the RayJob controller polls every 3 s.
const waitTimeout = 45 * time.Second

// world is one test's namespace on the shared API server and an operator
// running the RayCluster and RayJob controllers with one batch scheduler
// plugin, made as internal/operator makes it.
type world struct {
	t     *testing.T
	c     client.Client
	ns    string
	dash  *dashboardtest.Fake
	sched batchscheduler.Scheduler
	run   testenv.Runner
}

func newWorld(t *testing.T, scheduler string) *world {
	env := testenv.Shared(t)
	w := &world{t: t, c: env.Client, ns: env.Namespace(t), dash: dashboardtest.NewFake()}
	mgr := testenv.NewManager(t, env, operator.CacheOptions(w.ns))
	factory, err := plugins.Factory(scheduler)
	if err != nil {
		t.Fatal(err)
	}
	if w.sched, err = factory.New(t.Context(), env.Config, mgr.GetClient()); err != nil {
		t.Fatal(err)
	}
	clock := clocktesting.NewFakeClock(time.Now())
	rc := raycluster.NewForManager(mgr, raycluster.Deps{Clock: clock},
		raycluster.Options{BatchScheduler: w.sched, BatchSchedulerFactory: factory})
	if err := rc.SetupWithManager(mgr, 1); err != nil {
		t.Fatal(err)
	}
	rj := rayjob.NewForManager(mgr, rayjob.Deps{Clock: clock, Dashboards: w.dash.Provider()},
		rayjob.Options{TransitionGracePeriod: 300 * time.Second, ClusterDomain: "cluster.local", BatchScheduler: w.sched})
	if err := rj.SetupWithManager(mgr, 1); err != nil {
		t.Fatal(err)
	}
	w.run.Start(mgr)
	t.Cleanup(w.run.Stop)
	return w
}

// eventually polls cond until it holds or waitTimeout passes.
func (w *world) eventually(what string, cond func() (bool, error)) {
	w.t.Helper()
	testenv.Eventually(w.t, what, waitTimeout, cond)
}

// consistently polls cond for d and fails as soon as it does not hold.
func (w *world) consistently(what string, d time.Duration, cond func() (bool, error)) {
	w.t.Helper()
	testenv.Consistently(w.t, what, d, cond)
}

func (w *world) create(obj client.Object) {
	w.t.Helper()
	obj.SetNamespace(w.ns)
	if err := w.c.Create(context.Background(), obj); err != nil {
		w.t.Fatal(err)
	}
}

// get reads obj by name into obj; false once it is gone.
func (w *world) get(name string, obj client.Object) bool {
	w.t.Helper()
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, obj); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return false
		}
		w.t.Fatal(err)
	}
	return true
}

// update re-reads obj, applies mutate and writes it (its status when
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

// waitGet waits until the named object exists and returns it in obj.
func (w *world) waitGet(name string, obj client.Object) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("%T %s", obj, name), func() (bool, error) { return w.get(name, obj), nil })
}

// pods waits for n Pods of the cluster and returns them sorted by name.
func (w *world) pods(cluster string, n int) []corev1.Pod {
	w.t.Helper()
	var list corev1.PodList
	w.eventually(fmt.Sprintf("%d Pods of %s", n, cluster), func() (bool, error) {
		err := w.c.List(context.Background(), &list, client.InNamespace(w.ns), client.MatchingLabels{rayv1.LabelCluster: cluster})
		return err == nil && len(list.Items) == n, fmt.Errorf("%d Pods, %v", len(list.Items), err)
	})
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

// runPods makes every Pod of the cluster Running and Ready, as a kubelet.
func (w *world) runPods(cluster string, n int) {
	w.t.Helper()
	pods := w.pods(cluster, n)
	ptrs := make([]*corev1.Pod, len(pods))
	for i := range pods {
		ptrs[i] = &pods[i]
	}
	if err := testenv.MarkPodsRunningReady(context.Background(), w.c, ptrs...); err != nil {
		w.t.Fatal(err)
	}
}

// job reads a RayJob.
func (w *world) job(name string) *rayv1.RayJob {
	w.t.Helper()
	job := &rayv1.RayJob{}
	if !w.get(name, job) {
		w.t.Fatalf("RayJob %s is gone", name)
	}
	return job
}

// waitFor waits for the RayJob to reach a deployment status.
func (w *world) waitFor(name string, status rayv1.JobDeploymentStatus) *rayv1.RayJob {
	w.t.Helper()
	var job *rayv1.RayJob
	w.eventually(fmt.Sprintf("RayJob %s to be %s", name, status), func() (bool, error) {
		job = w.job(name)
		return job.Status.JobDeploymentStatus == status, fmt.Errorf("%s: %s", job.Status.JobDeploymentStatus, job.Status.Message)
	})
	return job
}

// clusterOf waits for the RayJob's RayCluster.
func (w *world) clusterOf(jobName string) *rayv1.RayCluster {
	w.t.Helper()
	cluster := &rayv1.RayCluster{}
	w.eventually("the RayCluster of "+jobName, func() (bool, error) {
		job := w.job(jobName)
		return job.Status.RayClusterName != "" && w.get(job.Status.RayClusterName, cluster), nil
	})
	return cluster
}

// finishRayJob plays the submitter and the Job controller: the Ray job of
// jobName succeeds and its K8sJobMode submitter Job completes.
func (w *world) finishRayJob(jobName string) {
	w.t.Helper()
	w.eventually("the Ray job id of "+jobName, func() (bool, error) { return w.job(jobName).Status.JobID != "", nil })
	w.dash.AddJob(dashboard.JobInfo{Type: "SUBMISSION", SubmissionID: w.job(jobName).Status.JobID, JobStatus: rayv1.JobStatusSucceeded, StartTime: 1, EndTime: 2})
	batchJob := &batchv1.Job{}
	w.waitGet(jobName, batchJob)
	now := metav1.Now()
	w.update(batchJob, true, func() {
		batchJob.Status.StartTime, batchJob.Status.CompletionTime, batchJob.Status.Succeeded = &now, &now, 1
		batchJob.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
		}
	})
}

// events are the reasons of the events about the named object, with
// their notes.
func (w *world) events(name string) map[string][]string {
	w.t.Helper()
	var list eventsv1.EventList
	if err := w.c.List(context.Background(), &list, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out[e.Reason] = append(out[e.Reason], e.Note)
		}
	}
	return out
}

// waitEvent waits for an event of reason about name and returns its notes.
func (w *world) waitEvent(name, reason string) []string {
	w.t.Helper()
	var notes []string
	w.eventually(fmt.Sprintf("event %s on %s", reason, name), func() (bool, error) {
		notes = w.events(name)[reason]
		return len(notes) > 0, nil
	})
	return notes
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
	return &rayv1.RayClusterSpec{
		RayVersion: "2.52.0",
		HeadGroupSpec: rayv1.HeadGroupSpec{
			RayStartParams: map[string]string{},
			Template:       template("ray-head"),
		},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
			GroupName: "small", Replicas: ptr.To(replicas), MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](10),
			NumOfHosts: 1, RayStartParams: map[string]string{}, Template: template("ray-worker"),
		}},
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

// canonical renders quantities as strings, so that 1000m and 1 compare equal.
func canonical(l corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for k, q := range l {
		out[string(k)] = q.String()
	}
	return out
}

// podList lists the cluster's Pods now.
func (w *world) podList(cluster string) []corev1.Pod {
	w.t.Helper()
	var list corev1.PodList
	if err := w.c.List(context.Background(), &list, client.InNamespace(w.ns), client.MatchingLabels{rayv1.LabelCluster: cluster}); err != nil {
		w.t.Fatal(err)
	}
	return list.Items
}

// meta returns the condition of type t, or nil.
func meta(conditions []metav1.Condition, t string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}
