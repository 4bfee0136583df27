package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// rayletCrashRayJob runs five 5 s tasks one after another on the worker
// (only it has the worker_slot resource), each retried up to three times,
// and prints each result as it comes.
func rayletCrashRayJob() *rayv1.RayJob {
	return e2eutil.HTTPModeRayJob("raylet-crash", `python -c "import time, ray; ray.init(); `+
		`step = ray.remote(resources={'worker_slot': 1}, max_retries=3)(lambda i: time.sleep(5) or i * i); `+
		`[print('step', i, ray.get(step.remote(i)), flush=True) for i in range(5)]"`, stepsCluster())
}

// jobLogs prints the Ray job's driver output, read in the head Pod.
const jobLogs = `
from ray.job_submission import JobSubmissionClient
print(JobSubmissionClient("http://127.0.0.1:8265").get_job_logs(%q))
`

// TestWorkerRayletCrash (issue #22, scenario 3): the raylet of the only
// worker is SIGKILLed while a RayJob's task runs on it. ray start --block
// sees it die and the container exits; the node restarts the container,
// the worker rejoins, the task is retried there and the job ends
// SUCCEEDED with every step's result; the worker Pod counts one restart
// and the RayCluster is ready with its worker again.
func TestWorkerRayletCrash(t *testing.T) {
	began := time.Now()
	ns := shared.namespace(t)
	shared.create(t, ns, rayletCrashRayJob())
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	job, head := waitFirstStep(ctx, t, ns, "raylet-crash")
	cluster := job.Status.RayClusterName
	worker := shared.workerPod(ctx, t, ns, cluster)
	killed, err := killHostProcesses("raylet", "--node_ip_address="+worker.Status.PodIP)
	if err != nil || len(killed) == 0 {
		t.Fatalf("killing the worker's raylet (%s): %v, pids %v", worker.Status.PodIP, err, killed)
	}
	killedAt := time.Now()
	t.Logf("SIGKILL to the raylet of %s (%s), host pids %v, %v after the RayJob was applied", worker.Name, worker.Status.PodIP, killed, killedAt.Sub(began).Round(time.Second))

	done := shared.waitRayJob(t, ns, "raylet-crash", rayJobTimeout)
	requireSucceeded(t, done, cluster)
	logs, err := shared.rayPython(ctx, ns, head, fmt.Sprintf(jobLogs, job.Status.JobID))
	for i := range 5 {
		if want := fmt.Sprintf("step %d %d", i, i*i); err != nil || !strings.Contains(logs, want) {
			t.Errorf("driver output lacks %q (%v):\n%s", want, err, logs)
		}
	}
	t.Logf("RayJob SUCCEEDED %v after the kill", time.Since(killedAt).Round(time.Second))
	err = poll(ctx, func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := shared.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: cluster}, rc); err != nil {
			return false, err
		}
		w := shared.workerPod(ctx, t, ns, cluster)
		return restarts(w) == 1 && runningAndReady(w) && rc.Status.ReadyWorkerReplicas == 1 && rc.Status.State == rayv1.Ready,
			fmt.Errorf("worker restarts %d, ready %v; cluster %s with %d ready workers", restarts(w), runningAndReady(w), rc.Status.State, rc.Status.ReadyWorkerReplicas)
	})
	if err != nil {
		t.Errorf("the cluster did not recover: %v", err)
	}
	if w := shared.workerPod(ctx, t, ns, cluster); w.Name != worker.Name {
		t.Errorf("the worker Pod was replaced (%s, was %s); the node should restart its container", w.Name, worker.Name)
	}
}
