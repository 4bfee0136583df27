package kuberaysamples_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// Bounds of each step on a 2-core machine.
const (
	// readyTimeout: a head and its workers start (Ray takes about 13 s
	// per node there, more when they start together).
	readyTimeout = 8 * time.Minute
	// jobTimeout: a RayJob's cluster starts, its runtime environment is
	// installed from PyPI, its entrypoint runs.
	jobTimeout = 15 * time.Minute
	// submitTimeout: a job submitted to a ready cluster runs.
	submitTimeout = 5 * time.Minute
	// recoverTimeout: a new head starts and recovers the cluster from
	// Redis; the Redis cleanup Job runs.
	recoverTimeout = 4 * time.Minute
)

// sampleObjects is what a sample created, by the kinds the checks use.
type sampleObjects struct {
	cluster, job string    // the RayCluster's and the RayJob's names, or ""
	applied      time.Time // when kubectl create returned
}

// apply creates the objects of the sample file, unchanged, in ns with
// kubectl, as a user does (create rather than apply: a sample may name its
// RayJob by generateName, which apply refuses), and returns the names of
// its RayCluster and RayJob as created.
func (s *suite) apply(t *testing.T, ns, file string) sampleObjects {
	t.Helper()
	path := filepath.Join(s.samples, file)
	out, err := s.Kubectl(t.Context(), "create", "-n", ns, "-f", path, "-o", "name")
	if err != nil {
		t.Fatalf("kubectl create -f %s: %v\n%s", path, err, out)
	}
	so := sampleObjects{applied: time.Now()}
	for _, line := range strings.Fields(out) {
		kind, name, _ := strings.Cut(line, "/")
		switch kind {
		case "raycluster.ray.io":
			so.cluster = name
		case "rayjob.ray.io":
			so.job = name
		}
	}
	return so
}

// checkCluster: the RayCluster reaches state ready with every worker
// Running and Ready, and a job submitted to it runs a task on each of its
// Pods.
func (s *suite) checkCluster(t *testing.T, ns string, objs sampleObjects) (string, time.Duration) {
	t.Helper()
	head, nodes := s.waitClusterReady(t, ns, objs.cluster)
	took := time.Since(objs.applied)
	s.submitJob(t, ns, head, nodes)
	return "ready", took
}

// waitClusterReady waits until the RayCluster's state is ready, its head
// Pod is Running and Ready and it has as many worker Pods as it desires,
// all Running and Ready; it returns the head Pod and the number of Pods.
func (s *suite) waitClusterReady(t *testing.T, ns, name string) (*corev1.Pod, int) {
	t.Helper()
	if name == "" {
		t.Fatal("the sample has no RayCluster")
	}
	ctx, cancel := context.WithTimeout(t.Context(), readyTimeout)
	defer cancel()
	var head *corev1.Pod
	var nodes int
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			return false, err
		}
		heads, err := s.RayPods(ctx, ns, name, string(rayv1.HeadNode))
		if err != nil {
			return false, err
		}
		workers, err := s.RayPods(ctx, ns, name, string(rayv1.WorkerNode))
		if err != nil {
			return false, err
		}
		ready := countReady(workers)
		ok := rc.Status.State == rayv1.Ready && len(heads) == 1 && e2eutil.RunningAndReady(&heads[0]) &&
			len(workers) == int(rc.Status.DesiredWorkerReplicas) && ready == len(workers)
		if ok {
			head, nodes = &heads[0], 1+len(workers)
		}
		return ok, fmt.Errorf("state %q, %d head Pods, %d of %d worker Pods Running and Ready (desired %d)",
			rc.Status.State, len(heads), ready, len(workers), rc.Status.DesiredWorkerReplicas)
	})
	if err != nil {
		t.Fatalf("RayCluster %s is not ready: %v", name, err)
	}
	t.Logf("RayCluster %s ready with %d Pods", name, nodes)
	return head, nodes
}

// countReady counts the Running and Ready Pods.
func countReady(pods []corev1.Pod) int {
	n := 0
	for i := range pods {
		if e2eutil.RunningAndReady(&pods[i]) {
			n++
		}
	}
	return n
}

// onEveryNode is a job's entrypoint: a task pinned to each alive Ray node
// (no CPU, so that heads with num-cpus 0 take one too); it fails unless
// each ran where it was pinned, then prints how many nodes ran one.
const onEveryNode = `import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
ray.init()
@ray.remote(num_cpus=0)
def where():
    return ray.get_runtime_context().get_node_id()
alive = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
ran = ray.get([where.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote() for n in alive])
assert ran == alive, (ran, alive)
print("tasks ran on", len(alive), "nodes")
`

// submitJob submits onEveryNode with `ray job submit` in the head's Ray
// container, as a user who attaches to the head does, and checks that it
// succeeded on nodes nodes. submitArgs come before the entrypoint.
func (s *suite) submitJob(t *testing.T, ns string, head *corev1.Pod, nodes int, submitArgs ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), submitTimeout)
	defer cancel()
	args := append([]string{"exec", "-n", ns, head.Name, "-c", head.Spec.Containers[0].Name, "--",
		"ray", "job", "submit", "--address", "http://127.0.0.1:8265"}, submitArgs...)
	// ray job submit quotes each word of the entrypoint for the shell that
	// runs it.
	args = append(args, "--", "python", "-c", onEveryNode)
	out, err := s.Kubectl(ctx, args...)
	if err != nil {
		t.Fatalf("ray job submit in %s: %v\n%s", head.Name, err, out)
	}
	if want := fmt.Sprintf("tasks ran on %d nodes", nodes); len(submitArgs) == 0 && !strings.Contains(out, want) {
		t.Fatalf("the job submitted to %s did not print %q:\n%s", head.Name, want, out)
	}
}

// checkRedis: as checkCluster, then a detached actor created on the
// worker keeps its state while the head Pod is deleted and replaced (GCS
// fault tolerance through the sample's Redis), the workers keep running,
// and the RayCluster's deletion (its Redis cleanup) completes.
func (s *suite) checkRedis(t *testing.T, ns string, objs sampleObjects) (string, time.Duration) {
	t.Helper()
	// Registered after the namespace's cleanup, so run before it.
	t.Cleanup(func() {
		if err := s.deleteCluster(context.Background(), ns, objs.cluster); err != nil {
			t.Error(err)
		}
	})
	measured, took := s.checkCluster(t, ns, objs)
	ctx := t.Context()
	head := s.WaitHead(ctx, t, ns, objs.cluster, "", readyTimeout)
	workers := s.workerState(t, ns, objs.cluster)
	if out, err := s.RayPython(ctx, ns, head, "ray-head", e2eutil.CreateCounter); err != nil || !strings.Contains(out, "count 1") {
		t.Fatalf("creating the detached actor: %v\n%s", err, out)
	}
	deleted := time.Now()
	s.DeletePod(ctx, t, ns, head, recoverTimeout)
	newHead := s.WaitHead(ctx, t, ns, objs.cluster, head, recoverTimeout)
	if out := s.RetryPython(ctx, t, ns, newHead, "ray-head", e2eutil.ReadCounter, recoverTimeout); !strings.Contains(out, "count 1") {
		t.Fatalf("the detached actor lost its state across the head's replacement:\n%s", out)
	}
	t.Logf("head %s deleted; new head %s answered with the actor's state after %v", head, newHead, time.Since(deleted).Round(time.Second))
	if now := s.workerState(t, ns, objs.cluster); now != workers {
		t.Fatalf("the workers did not keep running while the head was replaced: were %s, now %s", workers, now)
	}
	if err := s.deleteCluster(ctx, ns, objs.cluster); err != nil {
		t.Fatal(err)
	}
	return measured + "; detached actor kept across the head Pod's deletion", took
}

// workerState describes the cluster's worker Pods by UID and restarts.
func (s *suite) workerState(t *testing.T, ns, cluster string) string {
	t.Helper()
	workers, err := s.RayPods(t.Context(), ns, cluster, string(rayv1.WorkerNode))
	if err != nil || len(workers) == 0 {
		t.Fatalf("want the worker Pods of %s, have %d (%v)", cluster, len(workers), err)
	}
	var b strings.Builder
	for i := range workers {
		fmt.Fprintf(&b, "%s/%s (%d restarts) ", workers[i].Name, workers[i].UID, e2eutil.Restarts(&workers[i]))
	}
	return b.String()
}

// deleteCluster deletes the RayCluster and waits until it and its Pods are
// gone, while the sample's Redis still runs for its cleanup Job (in a
// namespace being deleted the Job cannot be created, and the cluster
// would wait for the operator's deletion timeout, 5 minutes).
func (s *suite) deleteCluster(ctx context.Context, ns, name string) error {
	ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	rc := &rayv1.RayCluster{}
	rc.Namespace, rc.Name = ns, name
	if err := s.Client.Delete(ctx, rc); client.IgnoreNotFound(err) != nil {
		return err
	}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		return e2eutil.ClusterGone(ctx, s.Client, ns, name)
	})
	if err != nil {
		return fmt.Errorf("RayCluster %s is not gone: %w", name, err)
	}
	return nil
}

// checkJob: the RayJob reaches SUCCEEDED.
func (s *suite) checkJob(t *testing.T, ns string, objs sampleObjects) (string, time.Duration) {
	t.Helper()
	if objs.job == "" {
		t.Fatal("the sample has no RayJob")
	}
	job := s.WaitRayJob(t, ns, objs.job, jobTimeout)
	took := time.Since(objs.applied)
	if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || job.Status.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatalf("RayJob %s ended %s/%s: %s", objs.job, job.Status.JobDeploymentStatus, job.Status.JobStatus, job.Status.Message)
	}
	return "SUCCEEDED", took
}

// interactiveID is the submission ID of the job the user submits to the
// InteractiveMode sample.
const interactiveID = "kuberay-sample-interactive"

// checkInteractive: the RayJob waits for its job; the user submits
// onEveryNode with a submission ID of their own and sets it as the
// RayJob's spec.jobId (kubectl patch), and the RayJob reaches SUCCEEDED.
func (s *suite) checkInteractive(t *testing.T, ns string, objs sampleObjects) (string, time.Duration) {
	t.Helper()
	job := s.waitJobWaiting(t, ns, objs.job)
	head := s.WaitHead(t.Context(), t, ns, job.Status.RayClusterName, "", readyTimeout)
	pod := &corev1.Pod{}
	if err := s.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: head}, pod); err != nil {
		t.Fatal(err)
	}
	s.submitJob(t, ns, pod, 0, "--submission-id", interactiveID, "--no-wait")
	patch := fmt.Sprintf(`{"spec":{"jobId":%q}}`, interactiveID)
	if out, err := s.Kubectl(t.Context(), "patch", "rayjob", "-n", ns, objs.job, "--type=merge", "-p", patch); err != nil {
		t.Fatalf("setting spec.jobId of RayJob %s: %v\n%s", objs.job, err, out)
	}
	return s.checkJob(t, ns, objs)
}

// waitJobWaiting waits until the RayJob is Waiting for its job, with a
// cluster.
func (s *suite) waitJobWaiting(t *testing.T, ns, name string) *rayv1.RayJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), readyTimeout)
	defer cancel()
	job := &rayv1.RayJob{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return false, err
		}
		st := job.Status
		return st.JobDeploymentStatus == rayv1.JobDeploymentStatusWaiting && st.RayClusterName != "",
			fmt.Errorf("deployment %q, cluster %q", st.JobDeploymentStatus, st.RayClusterName)
	})
	if err != nil {
		t.Fatalf("RayJob %s is not waiting for its job: %v", name, err)
	}
	return job
}
