package rayversions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// Bounds of the waits. Every release runs at once on two shared CPUs, and
// a release's first Pods install it when it is not cached (20-60 s).
const (
	// clusterTimeout bounds a RayCluster's or RayService's first Pods
	// becoming Ready.
	clusterTimeout = 8 * time.Minute
	// caseTimeout bounds each case on a ready cluster.
	caseTimeout = 5 * time.Minute
)

// clusterName is the name of the shared RayCluster (sharedCluster).
const clusterName = "matrix"

// TestRayVersions runs every release of RAY_VERSIONS side by side: the
// cases of its shared RayCluster in order (the worker Ready first, then
// the RayJobs and the autoscaler together, then GCS fault tolerance, which
// replaces the head), and its RayService beside them.
func TestRayVersions(t *testing.T) {
	for _, v := range shared.versions {
		r := release{v: v}
		t.Run("Ray_"+r.String(), func(t *testing.T) {
			t.Parallel()
			t.Run("RayCluster", func(t *testing.T) {
				t.Parallel()
				testSharedCluster(t, r)
			})
			t.Run("RayService", func(t *testing.T) {
				t.Parallel()
				testRayService(t, r)
			})
			t.Run("token auth validation", func(t *testing.T) {
				t.Parallel()
				testTokenAuthValidation(t, r)
			})
		})
	}
}

// testSharedCluster creates the release's Redis and shared RayCluster and
// runs the cases that share it.
func testSharedCluster(t *testing.T, r release) {
	ns := shared.namespace(t)
	shared.apply(t, ns, []byte(redisManifest))
	rc := shared.apply(t, ns, r.manifest(sharedCluster))
	// Before the namespace goes (cleanups run last first): the RayCluster's
	// Redis cleanup finalizer needs the Redis the namespace deletion kills.
	t.Cleanup(func() { shared.removeCluster(ns) })
	if !t.Run("worker Ready", func(t *testing.T) { testWorkerReady(t, r, ns, rc.GetCreationTimestamp()) }) {
		t.Fatal("the shared RayCluster is not ready: the cases that share it cannot run")
	}
	t.Run("on the ready cluster", func(t *testing.T) {
		for _, mode := range []rayv1.JobSubmissionMode{rayv1.K8sJobMode, rayv1.HTTPMode} {
			t.Run("RayJob "+string(mode), func(t *testing.T) {
				t.Parallel()
				testRayJob(t, r, ns, mode)
			})
		}
		t.Run("autoscaler "+r.autoscalerVersion(), func(t *testing.T) {
			t.Parallel()
			testAutoscaler(t, r, ns)
		})
	})
	if r.autoscalerVersion() != "v2" {
		t.Run("autoscaler v2", func(t *testing.T) {
			why := fmt.Sprintf("not supported by Ray %s: the KubeRay autoscaler sidecar runs v2 from Ray %s (KubeRay does not refuse autoscalerOptions.version: v2 on older Ray; documented in docs/raycluster.md)", r, autoscalerV2)
			shared.track(t, r.String(), "autoscaler v2", &why)
			t.Skip(why)
		})
	}
	t.Run("GCS FT with Redis", func(t *testing.T) { testGCSFaultTolerance(t, r, ns) })
	t.Run("Redis cleanup", func(t *testing.T) { testRedisCleanup(t, r, ns) })
}

// testWorkerReady waits until the head and the fixed group's worker are
// Ready under the probes the operator gives the release, and checks that
// both run it.
func testWorkerReady(t *testing.T, r release, ns string, created metav1.Time) {
	var note string
	shared.track(t, r.String(), "RayCluster: head and worker Ready", &note)
	ctx, cancel := context.WithTimeout(t.Context(), clusterTimeout)
	defer cancel()
	head := shared.WaitHead(ctx, t, ns, clusterName, "", clusterTimeout)
	worker := shared.waitGroup(ctx, t, ns, "fixed", 1)
	headPod := shared.pod(t, ns, head)
	for _, p := range []*corev1.Pod{headPod, worker} {
		requireProbes(t, r, p)
		shared.requireRayRelease(t, r, ns, p.Name, p.Spec.Containers[0].Name)
	}
	shared.waitClusterState(ctx, t, ns, rayv1.Ready)
	probes := "exec"
	if r.httpProbes() {
		probes = "httpGet /api/healthz"
	}
	note = fmt.Sprintf("head Ready %v, worker %v after creation; %s probes", readyAfter(headPod, created), readyAfter(worker, created), probes)
}

// requireProbes fails t unless the Ray container of p has the readiness and
// liveness probes of the release: httpGet /api/healthz from 2.53.0, exec
// before.
func requireProbes(t *testing.T, r release, p *corev1.Pod) {
	t.Helper()
	c := p.Spec.Containers[0]
	for what, probe := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		switch {
		case probe == nil:
			t.Errorf("%s of %s has no %s probe", c.Name, p.Name, what)
		case r.httpProbes() && (probe.HTTPGet == nil || probe.HTTPGet.Path != "/api/healthz"):
			t.Errorf("%s probe of %s on Ray %s is %+v, want httpGet /api/healthz", what, p.Name, r, probe.ProbeHandler)
		case !r.httpProbes() && probe.Exec == nil:
			t.Errorf("%s probe of %s on Ray %s is %+v, want exec", what, p.Name, r, probe.ProbeHandler)
		}
	}
}

// readyAfter is how long after created the Pod became Ready.
func readyAfter(p *corev1.Pod, created metav1.Time) time.Duration {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Sub(created.Time)
		}
	}
	return 0
}

// testRayJob runs a RayJob of mode on the shared cluster and waits for
// SUCCEEDED; Ray's own job record must hold the driver's output (printed on
// the release) and the RayJob's metadata.
func testRayJob(t *testing.T, r release, ns string, mode rayv1.JobSubmissionMode) {
	var note string
	shared.track(t, r.String(), "RayJob "+string(mode), &note)
	name := "job-" + strings.ToLower(string(mode))
	shared.apply(t, ns, r.rayJobManifest(name, string(mode)))
	job := shared.WaitRayJob(t, ns, name, caseTimeout)
	st := job.Status
	if st.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || st.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatalf("RayJob %s ended %s/%s (%s), want Complete/SUCCEEDED", name, st.JobDeploymentStatus, st.JobStatus, st.Message)
	}
	head := shared.headPod(t, ns)
	record := shared.python(t, ns, head, "ray-head", fmt.Sprintf(jobRecordScript, st.JobID))
	if !strings.Contains(record, r.driverOutput()) || !strings.Contains(record, "metadata matrix="+r.String()) {
		t.Fatalf("Ray's record of job %s lacks the driver's output %q or the metadata matrix=%s:\n%s", st.JobID, r.driverOutput(), r, record)
	}
	if mode == rayv1.K8sJobMode {
		if logs := shared.submitterLogs(t, ns, name); !strings.Contains(logs, r.driverOutput()) {
			t.Fatalf("the submitter's logs lack the driver's output %q:\n%s", r.driverOutput(), logs)
		}
	}
	if st.EndTime != nil {
		note = fmt.Sprintf("SUCCEEDED %v after creation", st.EndTime.Sub(job.CreationTimestamp.Time))
	}
}

// jobRecordScript prints a job's logs and its metadata as Ray keeps them
// (the job submission SDK, as old as Ray 2.0).
const jobRecordScript = `
from ray.job_submission import JobSubmissionClient
c = JobSubmissionClient("http://127.0.0.1:8265")
print(c.get_job_logs(%[1]q))
print("metadata matrix=" + c.get_job_info(%[1]q).metadata.get("matrix", ""))
`

// scaledTask needs the custom resource only the "scaled" group offers and
// prints the host (the Pod) it ran on.
const scaledTask = `
import socket, ray
ray.init()
@ray.remote(num_cpus=0, resources={"scaled": 1})
def where():
    return socket.gethostname()
print("task ran on", ray.get(where.remote()))
`

// testAutoscaler runs a task that only a worker of the empty "scaled"
// group can run: the in-tree autoscaler must raise the group's replicas,
// the operator start the worker, and the task finish on it.
func testAutoscaler(t *testing.T, r release, ns string) {
	var note string
	shared.track(t, r.String(), "autoscaler "+r.autoscalerVersion()+" adds a worker", &note)
	began := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), caseTimeout)
	defer cancel()
	head := shared.headPod(t, ns)
	task := make(chan string, 1)
	go func() {
		out, err := shared.RayPython(ctx, ns, head, "ray-head", scaledTask)
		task <- fmt.Sprintf("%s (error: %v)", out, err)
	}()
	worker := shared.waitGroup(ctx, t, ns, "scaled", 1)
	scaledAfter := time.Since(began)
	select {
	case out := <-task:
		if !strings.Contains(out, "task ran on "+worker.Name+"\n") {
			t.Fatalf("the task did not run on the new worker %s: %s", worker.Name, out)
		}
	case <-ctx.Done():
		t.Fatalf("the task did not finish: %v", ctx.Err())
	}
	shared.requireRayRelease(t, r, ns, worker.Name, "ray-worker")
	note = fmt.Sprintf("worker Ready %v after the task was submitted", scaledAfter.Round(time.Second))
}

// testGCSFaultTolerance creates a detached actor on the worker, deletes the
// head Pod, and reads the actor's state through the new head, which
// recovered the cluster from Redis while the worker kept running.
func testGCSFaultTolerance(t *testing.T, r release, ns string) {
	var note string
	shared.track(t, r.String(), "GCS FT with Redis: head Pod deleted", &note)
	ctx, cancel := context.WithTimeout(t.Context(), 3*caseTimeout)
	defer cancel()
	head := shared.headPod(t, ns)
	worker := shared.waitGroup(ctx, t, ns, "fixed", 1)
	if out := shared.python(t, ns, head, "ray-head", e2eutil.CreateCounter); !strings.Contains(out, "count 1") {
		t.Fatalf("creating the detached actor printed:\n%s", out)
	}
	if keys := shared.redisKeys(t, ns); len(keys) == 0 {
		t.Fatal("Redis holds no key after the actor was created")
	}
	deleted := time.Now()
	shared.DeletePod(ctx, t, ns, head, caseTimeout)
	newHead := shared.WaitHead(ctx, t, ns, clusterName, head, caseTimeout)
	readyAfter := time.Since(deleted)
	if out := shared.RetryPython(ctx, t, ns, newHead, "ray-head", e2eutil.ReadCounter, caseTimeout); !strings.Contains(out, "count 1") {
		t.Fatalf("the detached actor lost its state across the head's replacement:\n%s", out)
	}
	answered := time.Since(deleted)
	if w := shared.pod(t, ns, worker.Name); w.UID != worker.UID || e2eutil.Restarts(w) != e2eutil.Restarts(worker) {
		t.Fatalf("the worker did not keep running while the head was replaced (restarts %d, then %d)", e2eutil.Restarts(worker), e2eutil.Restarts(w))
	}
	shared.requireRayRelease(t, r, ns, newHead, "ray-head")
	note = fmt.Sprintf("new head Ready %v, actor answered %v after the deletion",
		readyAfter.Round(time.Second), answered.Round(time.Second))
}

// testRedisCleanup deletes the shared RayCluster: its finalizer's Redis
// cleanup Job, which runs the release's own cleanup function, must succeed
// and leave Redis empty. On a release with a known cleanup crash
// (cleanupCrash) the Job must fail that way instead, after emptying Redis;
// the case fails if the Job succeeds there, so that the record is dropped
// once the crash is gone.
func testRedisCleanup(t *testing.T, r release, ns string) {
	var note string
	crash := r.knownCleanupCrash()
	if crash == "" {
		shared.track(t, r.String(), "Redis cleanup Job on deletion", &note)
	} else {
		shared.trackKnownFailure(t, r.String(), "Redis cleanup Job on deletion", &note)
	}
	ctx, cancel := context.WithTimeout(t.Context(), caseTimeout)
	defer cancel()
	began := time.Now()
	run := shared.deleteCluster(ctx, t, ns)
	gone := time.Since(began).Round(time.Second)
	if crash == "" && run.failed != "" {
		t.Fatalf("RayCluster %s: %s\nthe cleanup Job's logs:\n%s", clusterName, run.failed, run.logs)
	}
	if keys := shared.redisKeys(t, ns); len(keys) != 0 {
		t.Fatalf("Redis still holds keys after the RayCluster was deleted: %v", keys)
	}
	if crash == "" {
		note = fmt.Sprintf("RayCluster gone %v after its deletion, Redis empty", gone)
		return
	}
	requireCleanupCrash(t, r, run)
	note = fmt.Sprintf("known failure of Ray %s: the Job deleted every key and then crashed (exit codes %v); RayCluster gone %v after its deletion, Redis empty. %s", r, run.exitCodes, gone, crash)
}

// requireCleanupCrash fails t unless the cleanup Job of a release with a
// known cleanup crash failed the known way: every table deleted, then
// glibc's abort on a corrupted heap, the container killed by a signal
// (SIGABRT, or SIGSEGV when python runs as the container's PID 1 and
// abort's own signal is ignored), and the operator's RedisCleanupJobFailed.
func requireCleanupCrash(t *testing.T, r release, run cleanupRun) {
	t.Helper()
	if run.failed == "" {
		t.Fatalf("Ray %s's Redis cleanup Job succeeded, but the matrix records it as a known failure (cleanupCrash): "+
			"if the crash is gone, remove the record and update docs/dev/ray-versions.md\nthe Job's logs:\n%s", r, run.logs)
	}
	killed := false
	for _, c := range run.exitCodes {
		killed = killed || c > 128
	}
	if !strings.Contains(run.logs, "Failed table count: 0") || !strings.Contains(run.logs, "malloc(): ") || !killed {
		t.Fatalf("Ray %s's Redis cleanup Job failed (%s), but not as recorded (every table deleted, then glibc's malloc abort, the container killed by a signal); exit codes %v, logs:\n%s",
			r, run.failed, run.exitCodes, run.logs)
	}
}

// testRayService runs the hello RayService on the release and waits until
// it is Ready and its serve Service answers.
func testRayService(t *testing.T, r release) {
	var note string
	shared.track(t, r.String(), "RayService Ready and answering", &note)
	ns := shared.namespace(t)
	if err := shared.Client.Create(t.Context(), e2eutil.HelloApp(ns)); err != nil {
		t.Fatal(err)
	}
	answer := "hello from Ray " + r.String()
	rs := e2eutil.HelloRayService(ns, answer)
	rs.Spec.RayClusterSpec.RayVersion = r.String()
	rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:" + r.String()
	if err := shared.Client.Create(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	rs = shared.waitRayService(t, ns)
	ready := time.Since(rs.CreationTimestamp.Time)
	active := rs.Status.ActiveServiceStatus.RayClusterName
	head := shared.WaitHead(t.Context(), t, ns, active, "", time.Minute)
	shared.requireRayRelease(t, r, ns, head, "ray-head")
	svc := &corev1.Service{}
	if err := shared.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: e2eutil.HelloName + "-serve-svc"}, svc); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:%d%s", svc.Spec.ClusterIP, e2eutil.HelloServePort, e2eutil.HelloRoute)
	shared.waitAnswer(t, url, answer)
	note = fmt.Sprintf("Ready %v after creation, answered %v after creation", ready.Round(time.Second), time.Since(rs.CreationTimestamp.Time).Round(time.Second))
}

// apply creates the objects of a YAML manifest in ns and returns the last
// one as the API server stored it.
func (s *suite) apply(t *testing.T, ns string, data []byte) *unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatalf("decoding a manifest: %v", err)
	}
	for _, u := range objs {
		u.SetNamespace(ns)
		if err := s.Client.Create(t.Context(), u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	return objs[len(objs)-1]
}

// namespace creates a namespace for t (e2eutil.Namespace); when t failed,
// what the namespace held is printed before it is deleted.
func (s *suite) namespace(t *testing.T) string {
	t.Helper()
	return e2eutil.Namespace(t, s.Client, func(ctx context.Context, ns string) { s.Dump(ctx, t, ns) })
}

// pod reads a Pod.
func (s *suite) pod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	if err := s.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// headPod returns the name of the shared cluster's running and ready head.
func (s *suite) headPod(t *testing.T, ns string) string {
	t.Helper()
	return s.WaitHead(t.Context(), t, ns, clusterName, "", time.Minute)
}

// python runs a script in a Pod's container and returns what it printed.
func (s *suite) python(t *testing.T, ns, pod, container, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), caseTimeout)
	defer cancel()
	out, err := s.RayPython(ctx, ns, pod, container, script)
	if err != nil {
		t.Fatalf("running a script in %s: %v\n%s", pod, err, out)
	}
	return out
}

// requireRayRelease fails t unless the Ray imported in the container is
// the release (not just its image tag).
func (s *suite) requireRayRelease(t *testing.T, r release, ns, pod, container string) {
	t.Helper()
	if got := strings.TrimSpace(s.python(t, ns, pod, container, "import ray; print(ray.__version__)")); got != r.String() {
		t.Fatalf("%s of %s runs Ray %q, want %s", container, pod, got, r)
	}
}

// waitGroup waits until the shared cluster's worker group has replicas in
// its spec and as many running and ready Pods, and returns the last one.
func (s *suite) waitGroup(ctx context.Context, t *testing.T, ns, group string, replicas int32) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, rc); err != nil {
			return false, err
		}
		var want *int32
		for _, g := range rc.Spec.WorkerGroupSpecs {
			if g.GroupName == group {
				want = g.Replicas
			}
		}
		pods := &corev1.PodList{}
		if err := s.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCluster: clusterName, rayv1.LabelGroup: group}); err != nil {
			return false, err
		}
		ready := 0
		for i := range pods.Items {
			if e2eutil.RunningAndReady(&pods.Items[i]) {
				ready++
				last = &pods.Items[i]
			}
		}
		ok := ptr.Deref(want, -1) == replicas && len(pods.Items) == int(replicas) && ready == int(replicas)
		return ok, fmt.Errorf("spec replicas %d, %d Pods, %d ready", ptr.Deref(want, -1), len(pods.Items), ready)
	})
	if err != nil {
		t.Fatalf("worker group %s did not reach %d ready replicas: %v", group, replicas, err)
	}
	return last
}

// waitClusterState waits until the shared cluster's status.state is state.
func (s *suite) waitClusterState(ctx context.Context, t *testing.T, ns string, state rayv1.ClusterState) {
	t.Helper()
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, rc); err != nil {
			return false, err
		}
		return rc.Status.State == state, fmt.Errorf("state %q", rc.Status.State)
	})
	if err != nil {
		t.Fatalf("RayCluster %s is not %s: %v", clusterName, state, err)
	}
}

// testTokenAuthValidation creates a suspended RayCluster with token auth:
// below Ray 2.52.0 the operator must refuse it with a message naming that
// release (condition RayClusterValidationFailed), from 2.52.0 accept it
// (state suspended).
func testTokenAuthValidation(t *testing.T, r release) {
	var note string
	shared.track(t, r.String(), "token auth: the operator's validation", &note)
	ns := shared.namespace(t)
	shared.apply(t, ns, r.manifest(tokenAuthCluster))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	refuse := r.v.LessThan(tokenAuth)
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := shared.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "token"}, rc); err != nil {
			return false, err
		}
		failed := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterValidationFailed))
		if refuse {
			ok := failed != nil && failed.Status == metav1.ConditionTrue && strings.Contains(failed.Message, tokenAuth.String())
			if ok {
				note = "refused: " + failed.Message
			}
			return ok, fmt.Errorf("condition %s is %v, want True naming %s", rayv1.RayClusterValidationFailed, failed, tokenAuth)
		}
		note = "accepted"
		return rc.Status.State == rayv1.Suspended && failed == nil, fmt.Errorf("state %q, condition %s %v", rc.Status.State, rayv1.RayClusterValidationFailed, failed)
	})
	if err != nil {
		t.Fatal(err)
	}
}
