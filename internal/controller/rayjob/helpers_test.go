package rayjob

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	testNS      = "ns"
	testJobName = "job"
	testCluster = "job-cluster"
	testJobID   = "job-id"
	testURL     = "job-cluster-head-svc.ns.svc.cluster.local:8265"
)

// testEnv is a Reconciler over a fake client, a fake clock and a fake
// dashboard.
type testEnv struct {
	r      *Reconciler
	client client.Client
	clock  *clocktesting.FakeClock
	dash   *dashboardtest.Fake
	events *events.FakeRecorder
	opts   Options
}

// envOption changes the Options of a testEnv.
type envOption func(*Options)

// withGate sets a feature gate.
func withGate(name string, on bool) envOption {
	return func(o *Options) {
		gate := features.NewGate()
		if err := gate.SetFromMap(map[string]bool{name: on}); err != nil {
			panic(err)
		}
		o.Features = gate
	}
}

// newEnv builds a testEnv holding objs.
func newEnv(t *testing.T, objs []client.Object, opts ...envOption) *testEnv {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, clusterindex.Pods, clusterindex.ClusterOf).
		WithStatusSubresource(&rayv1.RayJob{}, &rayv1.RayCluster{}, &batchv1.Job{}).Build()
	clock := clocktesting.NewFakeClock(t0)
	e := &testEnv{
		client: c,
		clock:  clock,
		dash:   dashboardtest.NewFakeWithClock(clock),
		events: events.NewFakeRecorder(100),
		opts:   Options{TransitionGracePeriod: 300 * time.Second, Features: features.NewGate()},
	}
	for _, o := range opts {
		o(&e.opts)
	}
	e.r = New(Deps{Core: managerdeps.Core{Client: c, Recorder: e.events, Clock: e.clock}, Dashboards: e.dash.Provider()}, e.opts)
	return e
}

// reconcile runs one pass over the test RayJob.
func (e *testEnv) reconcile(t *testing.T) (ctrl.Result, error) {
	t.Helper()
	return e.r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNS, Name: testJobName}})
}

// job reads the test RayJob back; nil when it is gone.
func (e *testEnv) job(t *testing.T) *rayv1.RayJob {
	t.Helper()
	job := &rayv1.RayJob{}
	if err := e.client.Get(t.Context(), client.ObjectKey{Namespace: testNS, Name: testJobName}, job); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		t.Fatal(err)
	}
	return job
}

// exists reports whether obj (by name) exists.
func (e *testEnv) exists(t *testing.T, obj client.Object) bool {
	t.Helper()
	err := e.client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err == nil
}

// jobOption changes a test RayJob.
type jobOption func(*rayv1.RayJob)

// makeJob returns a New K8sJobMode RayJob with a one-worker-group cluster spec.
func makeJob(opts ...jobOption) *rayv1.RayJob {
	job := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: testJobName, Namespace: testNS, UID: "uid-1",
			Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}},
		Spec: rayv1.RayJobSpec{
			Entrypoint:     "python main.py",
			SubmissionMode: rayv1.K8sJobMode,
			RayClusterSpec: &rayv1.RayClusterSpec{
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.9.0"}},
					}},
				},
				WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
					GroupName: "small", Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](2),
					RayStartParams: map[string]string{},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.9.0"}},
					}},
				}},
			},
		},
	}
	for _, o := range opts {
		o(job)
	}
	return job
}

// inState puts the RayJob in status as if earlier passes had run: finalizer,
// ids, start time, and the dashboard URL once past Initializing.
func inState(status rayv1.JobDeploymentStatus) jobOption {
	return func(job *rayv1.RayJob) {
		job.Finalizers = []string{rayv1.RayJobStopJobFinalizer}
		job.Status.JobDeploymentStatus = status
		job.Status.JobID = testJobID
		job.Status.RayClusterName = testCluster
		job.Status.StartTime = &metav1.Time{Time: t0}
		job.Status.Failed, job.Status.Succeeded = ptr.To[int32](0), ptr.To[int32](0)
		switch status {
		case rayv1.JobDeploymentStatusInitializing:
		default:
			job.Status.DashboardURL = testURL
		}
	}
}

// mode sets the submission mode.
func mode(m rayv1.JobSubmissionMode) jobOption {
	return func(job *rayv1.RayJob) { job.Spec.SubmissionMode = m }
}

// jobStatus sets the Ray job status last seen.
func jobStatus(s rayv1.JobStatus) jobOption {
	return func(job *rayv1.RayJob) { job.Status.JobStatus = s }
}

// ended marks a finished RayJob: its Ray job status and EndTime.
func ended(deployment rayv1.JobDeploymentStatus, ray rayv1.JobStatus, at time.Time) jobOption {
	return func(job *rayv1.RayJob) {
		inState(deployment)(job)
		job.Status.JobStatus = ray
		job.Status.EndTime = &metav1.Time{Time: at}
	}
}

// makeCluster returns the RayJob's cluster in state.
func makeCluster(state rayv1.ClusterState) *rayv1.RayCluster {
	job := makeJob()
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: testCluster, Namespace: testNS},
		Spec:       *job.Spec.RayClusterSpec,
		Status:     rayv1.RayClusterStatus{State: state},
	}
}

// headService is the cluster's head Service with its dashboard port.
func headService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: testCluster + "-head-svc", Namespace: testNS},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{rayv1.LabelCluster: testCluster, rayv1.LabelNodeType: "head"},
			Ports:     []corev1.ServicePort{{Name: "dashboard", Port: 8265}, {Name: "client", Port: 10001}},
		},
	}
}

// submitterJob is the K8sJobMode submitter Job with the given finished
// condition ("" while running) set at finishedAt.
func submitterJob(condition batchv1.JobConditionType, finishedAt time.Time) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: testJobName, Namespace: testNS}}
	if condition != "" {
		job.Status.Conditions = []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.Time{Time: finishedAt}, Reason: "BackoffLimitExceeded", Message: "failed 3 times"}}
	}
	return job
}

// headPod is the cluster's head Pod; submitter, when not nil, is the state
// of its sidecar submitter container.
func headPod(submitter *corev1.ContainerStateTerminated) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: testCluster + "-head-x", Namespace: testNS,
		Labels: map[string]string{rayv1.LabelCluster: testCluster, rayv1.LabelNodeType: "head"}}}
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	if submitter != nil {
		state = corev1.ContainerState{Terminated: submitter}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-job-submitter", State: state}}
	return pod
}

// rayJobInfo is a dashboard job of the test RayJob.
func rayJobInfo(status rayv1.JobStatus, endMillis uint64) dashboard.JobInfo {
	return dashboard.JobInfo{SubmissionID: testJobID, JobStatus: status, Message: "msg " + string(status),
		StartTime: uint64(t0.UnixMilli()), EndTime: endMillis}
}
