package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// autoscalingCluster has a head that offers no CPU and one worker group that
// starts empty: a task that needs a CPU can only run once the Ray autoscaler
// (the head's sidecar) has scaled the group up through the operator. The
// idle timeout is short so that the scale-down follows soon. Requests fit
// the two-CPU node (1 CPU in all with the worker).
const autoscalingCluster = `
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: autoscale
spec:
  rayVersion: "2.52.0"
  enableInTreeAutoscaling: true
  autoscalerOptions:
    version: v2
    idleTimeoutSeconds: 10
    resources:
      requests: {cpu: 200m, memory: 512Mi}
      limits: {cpu: 500m, memory: 1Gi}
  headGroupSpec:
    rayStartParams:
      num-cpus: "0"
    template:
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
            resources:
              requests: {cpu: 500m, memory: 2Gi}
              limits: {cpu: "1", memory: 2Gi}
  workerGroupSpecs:
    - groupName: small
      replicas: 0
      minReplicas: 0
      maxReplicas: 1
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-worker
              image: rayproject/ray:2.52.0
              resources:
                requests: {cpu: 300m, memory: 1Gi}
                limits: {cpu: "1", memory: 1Gi}
`

// oneCPUTask asks for one CPU, which only a worker has, and prints the host
// (the Pod) it ran on.
const oneCPUTask = `
import socket, ray
ray.init()
@ray.remote(num_cpus=1)
def where():
    return socket.gethostname()
print("task ran on", ray.get(where.remote()))
`

// autoscaleTimeout bounds each phase: the head and its autoscaler start,
// a worker starts (about 15 s each), the idle timeout passes.
const autoscaleTimeout = 4 * time.Minute

// TestAutoscalerScalesWorkerGroup: a task that needs more CPUs than the head
// offers makes the in-tree autoscaler raise the group's replicas; the
// operator starts the worker, the task completes on it, and once the worker
// has been idle for the timeout the autoscaler scales the group back to zero
// and the worker Pod goes away.
func TestAutoscalerScalesWorkerGroup(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	rc := shared.applyManifest(t, ns, "autoscalingCluster", []byte(autoscalingCluster)).(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), 3*autoscaleTimeout)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, rc.Name, "")

	task := make(chan taskResult, 1)
	go func() {
		out, err := shared.rayPython(ctx, ns, head, oneCPUTask)
		task <- taskResult{out, err}
	}()
	worker := shared.waitWorkerGroup(ctx, t, ns, rc.Name, 1)
	t.Logf("scaled up to worker %s after %v", worker, time.Since(began).Round(time.Second))
	select {
	case r := <-task:
		if r.err != nil || !strings.Contains(r.out, "task ran on "+worker) {
			t.Fatalf("the one-CPU task did not run on the new worker %s: %v\n%s", worker, r.err, r.out)
		}
	case <-ctx.Done():
		t.Fatalf("the one-CPU task did not finish: %v", ctx.Err())
	}
	shared.waitWorkerGroup(ctx, t, ns, rc.Name, 0)
	t.Logf("scaled up and down in %v", time.Since(began).Round(time.Second))
}

type taskResult struct {
	out string
	err error
}

// waitHead waits until the cluster has one running and ready head Pod other
// than previous (a Pod name, or "") and returns its name.
func (s *suite) waitHead(ctx context.Context, t *testing.T, ns, cluster, previous string) string {
	t.Helper()
	return s.WaitHead(ctx, t, ns, cluster, previous, autoscaleTimeout)
}

// waitWorkerGroup waits until the cluster's only worker group asks for
// replicas workers and has exactly that many Pods, all running and ready
// (none at all for zero), and returns the name of one of them.
func (s *suite) waitWorkerGroup(ctx context.Context, t *testing.T, ns, cluster string, replicas int32) string {
	t.Helper()
	return s.WaitWorkerGroup(ctx, t, ns, cluster, "", replicas, autoscaleTimeout)
}
