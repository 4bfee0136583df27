package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// nodeRestartSteps is how many 10 s steps nodeRestartRayJob runs: the
// restart, a few seconds after the first step's end, falls in the middle.
const nodeRestartSteps = 6

// nodeRestartRayJob is nodeDownRayJob with its own name and
// nodeRestartSteps steps.
func nodeRestartRayJob() *rayv1.RayJob { return stepsRayJob("node-restart", nodeRestartSteps) }

// TestNodeAgentRestarted (issue #22, scenario 4, part 1): while a RayJob's
// tasks run on the worker, the local node process is killed (SIGKILL:
// nothing stopped or written) and started again: its new sandbox host
// adopts the sandboxes and the containers conmon kept running, and new pod
// workers take them over from the pods' statuses. The same Pods (same containers, start times,
// restart count 0, raylet pids) stay Ready, exec and logs work at once,
// the RayJob ends SUCCEEDED with every step (no task lost or retried) and
// the RayCluster is ready with its worker.
func TestNodeAgentRestarted(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	ns, job, head, pods, before := startStepsJob(ctx, t, nodeRestartRayJob())
	cluster := job.Status.RayClusterName

	oldPID := shared.Cluster.NodePID()
	restartAt := time.Now()
	if err := shared.Cluster.RestartNode(ctx); err != nil {
		t.Fatalf("RestartNode: %v", err)
	}
	t.Logf("node process killed and started again (Node Ready) in %v", time.Since(restartAt).Round(time.Millisecond))
	if newPID := shared.Cluster.NodePID(); newPID == 0 || newPID == oldPID || syscall.Kill(oldPID, 0) == nil {
		t.Errorf("node process %d after the restart, %d before: want a new one and the old one gone", newPID, oldPID)
	}
	running := &rayv1.RayJob{}
	if err := shared.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "node-restart"}, running); err != nil || running.Status.JobStatus != rayv1.JobStatusRunning {
		t.Errorf("the RayJob is %q (%v) after the restart, want it still RUNNING: raise nodeRestartSteps", running.Status.JobStatus, err)
	}
	shared.waitPodsReady(ctx, t, ns, pods)
	assertPodsUnchanged(ctx, t, ns, pods, before, "across the restart")
	if headLog := shared.logs(ctx, ns, head, "ray-head", nil); !strings.Contains(headLog, "Ray runtime started") {
		t.Errorf("kubectl logs of the head after the restart:\n%s", headLog)
	}

	done := shared.waitRayJob(t, ns, "node-restart", rayJobTimeout)
	requireSucceeded(t, done, cluster)
	logs, err := shared.rayPython(ctx, ns, head, fmt.Sprintf(jobLogs, job.Status.JobID))
	for i := range nodeRestartSteps {
		if want := fmt.Sprintf("step %d %d", i, i*i); err != nil || !strings.Contains(logs, want) {
			t.Errorf("driver output lacks %q (%v):\n%s", want, err, logs)
		}
	}
	assertPodsUnchanged(ctx, t, ns, pods, before, "after the RayJob")
	shared.waitClusterConverged(ctx, t, ns, cluster)
}

// assertPodsUnchanged checks that every Pod of pods has the record it had
// before.
func assertPodsUnchanged(ctx context.Context, t *testing.T, ns string, pods map[string]*corev1.Pod, before map[string]podRecord, when string) {
	t.Helper()
	for role, p := range pods {
		now := shared.podObject(ctx, t, ns, p.Name)
		if got := recordPod(t, now); !equalRecords(got, before[role]) {
			t.Errorf("the %s Pod changed %s:\nbefore %+v\nafter  %+v", role, when, before[role], got)
		}
	}
}

// startStepsJob creates job (a stepsRayJob) in a new namespace, waits for its first step's result, and returns the
// namespace, the RayJob, the head Pod's name, the head and worker Pods and
// their records.
func startStepsJob(ctx context.Context, t *testing.T, job *rayv1.RayJob) (string, *rayv1.RayJob, string, map[string]*corev1.Pod, map[string]podRecord) {
	t.Helper()
	ns := shared.namespace(t)
	shared.create(t, ns, job)
	job, head := waitFirstStep(ctx, t, ns, job.Name)
	pods := map[string]*corev1.Pod{"head": shared.podObject(ctx, t, ns, head), "worker": shared.workerPod(ctx, t, ns, job.Status.RayClusterName)}
	before := map[string]podRecord{}
	for role, p := range pods {
		before[role] = recordPod(t, p)
	}
	return ns, job, head, pods, before
}

// waitFirstStep waits until the RayJob name in ns runs and its driver has
// printed its first step's result ("step 0 0"); it returns the RayJob and
// its head Pod's name.
func waitFirstStep(ctx context.Context, t *testing.T, ns, name string) (*rayv1.RayJob, string) {
	t.Helper()
	job := shared.waitRayJobState(t, ns, name, 4*time.Minute, func(j *rayv1.RayJob) bool {
		return j.Status.JobStatus == rayv1.JobStatusRunning
	})
	head := shared.waitHead(ctx, t, ns, job.Status.RayClusterName, "")
	var logs string
	err := poll(ctx, func() (bool, error) {
		var err error
		logs, err = shared.rayPython(ctx, ns, head, fmt.Sprintf(jobLogs, job.Status.JobID))
		return err == nil && strings.Contains(logs, "step 0 0"), err
	})
	if err != nil {
		t.Fatalf("the first step did not finish: %v\n%s", err, logs)
	}
	return job, head
}
