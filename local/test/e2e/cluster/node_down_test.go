package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
	localnode "github.com/ray-operator/ray-operator/local/internal/node"
)

// nodeDownSteps is how many 10 s steps nodeDownRayJob runs: the outage, from the first step's end past the
// node-monitor grace period (localnode.NodeMonitorGracePeriod, 20 s) to
// the node's start, about 30 s, ends while it still runs.
const nodeDownSteps = 7

// kubeDefaultNodeMonitorGrace is kube-controller-manager's default
// node-monitor grace period.
const kubeDefaultNodeMonitorGrace = 50 * time.Second

// nodeDownRayJob runs nodeDownSteps 10 s tasks one after
// another on the worker (only it has the worker_slot resource).
func nodeDownRayJob() *rayv1.RayJob { return stepsRayJob("node-down", nodeDownSteps) }

// stepsRayJob is a RayJob name that runs steps 10 s tasks one after
// another on the worker of a stepsCluster.
func stepsRayJob(name string, steps int) *rayv1.RayJob {
	entrypoint := fmt.Sprintf(`python -c "import time, ray; ray.init(); `+
		`step = ray.remote(resources={'worker_slot': 1})(lambda i: time.sleep(10) or i * i); `+
		`[print('step', i, ray.get(step.remote(i)), flush=True) for i in range(%d)]"`, steps)
	return e2eutil.HTTPModeRayJob(name, entrypoint, stepsCluster())
}

// stepsCluster is a head and one worker on Ray 2.52.0; only the worker
// has the worker_slot resource, so the steps' tasks run there.
func stepsCluster() *rayv1.RayClusterSpec {
	return e2eutil.NewRayCluster("", "2.52.0").
		Head("1", e2eutil.Resources("500m", "2Gi"), e2eutil.Resources("1", "2Gi")).
		Worker("workers", 1, "1", e2eutil.Resources("500m", "1Gi"), e2eutil.Resources("1", "1Gi")).
		WorkerResources(`"{\"worker_slot\": 1}"`).
		Spec()
}

// podRecord is what must not change about a Pod across the outage.
type podRecord struct {
	uid        types.UID
	containers string // name, id, start time and restart count of each container
	raylets    []int  // host pids of the Pod's raylet (the raylet binary)
}

// recordPod notes p's identity, its containers and its raylet's host pids.
func recordPod(t *testing.T, p *corev1.Pod) podRecord {
	t.Helper()
	var b strings.Builder
	for _, c := range p.Status.ContainerStatuses {
		started := ""
		if c.State.Running != nil {
			started = c.State.Running.StartedAt.UTC().String()
		}
		fmt.Fprintf(&b, "%s %s started %s restarts %d; ", c.Name, c.ContainerID, started, c.RestartCount)
	}
	raylets, err := findHostProcessesOf("raylet", "--node_ip_address="+p.Status.PodIP)
	if err != nil || len(raylets) == 0 {
		t.Fatalf("finding the raylet of %s (%s): %v, pids %v", p.Name, p.Status.PodIP, err, raylets)
	}
	slices.Sort(raylets)
	return podRecord{uid: p.UID, containers: b.String(), raylets: raylets}
}

// nodeReadyStatus is the status of the local Node's Ready condition.
func (s *suite) nodeReadyStatus(ctx context.Context) (corev1.ConditionStatus, error) {
	node, err := s.Clientset.CoreV1().Nodes().Get(ctx, s.Cluster.NodeName, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status, nil
		}
	}
	return "", nil
}

// podReady is the status of p's Ready condition.
func podReady(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}

// TestNodeAgentDown (issue #22, scenario 4, part 2): while a RayJob's
// tasks run on the worker, the local node process is killed (SIGKILL) and
// stays down for longer than the node-monitor grace period, its containers
// running on under their conmon as under a dead kubelet's container
// runtime. The control plane marks the Node Unknown and both Ray Pods
// Ready=False; once the node process is started again and adopts them, the
// same Pods (same containers, start times, restart count 0, raylet pids)
// are Ready again, the RayJob ends SUCCEEDED with every step, the
// RayCluster is ready with its worker, and logs and exec work.
func TestNodeAgentDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	ns, job, head, pods, before := startStepsJob(ctx, t, nodeDownRayJob())
	cluster := job.Status.RayClusterName

	outage := shared.stopNodeAgent(ctx, t, pods)
	// The job must span the outage.
	running := &rayv1.RayJob{}
	if err := shared.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "node-down"}, running); err != nil || running.Status.JobStatus != rayv1.JobStatusRunning {
		t.Errorf("the RayJob is %q (%v) at the end of the outage, want it still RUNNING: raise nodeDownSteps", running.Status.JobStatus, err)
	}
	startAt := time.Now()
	if err := shared.Cluster.StartNode(ctx); err != nil {
		t.Fatalf("StartNode: %v", err)
	}
	t.Logf("StartNode returned (Node Ready) in %v", time.Since(startAt).Round(time.Millisecond))
	shared.waitPodsReady(ctx, t, ns, pods)
	t.Logf("both Pods Ready again %v after StartNode began; outage %v", time.Since(startAt).Round(time.Millisecond), (outage + time.Since(startAt)).Round(time.Second))

	done := shared.waitRayJob(t, ns, "node-down", rayJobTimeout)
	requireSucceeded(t, done, cluster)
	logs, err := shared.rayPython(ctx, ns, head, fmt.Sprintf(jobLogs, job.Status.JobID))
	for i := range nodeDownSteps {
		if want := fmt.Sprintf("step %d %d", i, i*i); err != nil || !strings.Contains(logs, want) {
			t.Errorf("driver output lacks %q (%v):\n%s", want, err, logs)
		}
	}
	assertPodsUnchanged(ctx, t, ns, pods, before, "across the outage")
	if headLog := shared.logs(ctx, ns, head, "ray-head", nil); !strings.Contains(headLog, "Ray runtime started") {
		t.Errorf("kubectl logs of the head after StartNode:\n%s", headLog)
	}
	shared.waitClusterConverged(ctx, t, ns, cluster)
}

// stopNodeAgent kills the node process and waits until the Node is Unknown
// and every Pod of pods is Ready=False; it returns how long that took. The
// node process is started again when t ends if the test did not.
func (s *suite) stopNodeAgent(ctx context.Context, t *testing.T, pods map[string]*corev1.Pod) time.Duration {
	t.Helper()
	if err := s.Cluster.KillNode(); err != nil {
		t.Fatalf("KillNode: %v", err)
	}
	t.Cleanup(func() {
		if s.Cluster.NodePID() == 0 {
			_ = s.Cluster.StartNode(context.WithoutCancel(ctx))
		}
	})
	began := time.Now()
	err := poll(ctx, func() (bool, error) {
		st, err := s.nodeReadyStatus(ctx)
		return st == corev1.ConditionUnknown, fmt.Errorf("node Ready %q (%v)", st, err)
	})
	if err != nil {
		t.Fatalf("the Node was not marked Unknown: %v", err)
	}
	t.Logf("Node Ready=Unknown %v after KillNode", time.Since(began).Round(time.Second))
	// The local cluster's grace period (20 s, plus a node-monitor period
	// of 5 s) is honoured: kube-controller-manager's default would take
	// 50 s at the least.
	if unknown := time.Since(began); unknown >= kubeDefaultNodeMonitorGrace {
		t.Errorf("the Node was marked Unknown %v after KillNode: the node-monitor grace period %v is not applied", unknown.Round(time.Second), localnode.NodeMonitorGracePeriod)
	}
	err = poll(ctx, func() (bool, error) {
		for role, p := range pods {
			now := s.podObject(ctx, t, p.Namespace, p.Name)
			if podReady(now) != corev1.ConditionFalse {
				return false, fmt.Errorf("the %s Pod is Ready=%q", role, podReady(now))
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the Pods were not marked: %v", err)
	}
	if _, err := s.kubectl(ctx, "exec", "-n", pods["head"].Namespace, pods["head"].Name, "--", "true"); err == nil {
		t.Error("exec worked while the node process was down")
	}
	t.Logf("both Pods Ready=False %v after KillNode", time.Since(began).Round(time.Second))
	return time.Since(began)
}

// waitPodsReady waits until every Pod of pods is running and ready.
func (s *suite) waitPodsReady(ctx context.Context, t *testing.T, ns string, pods map[string]*corev1.Pod) {
	t.Helper()
	err := poll(ctx, func() (bool, error) {
		for role, p := range pods {
			if now := s.podObject(ctx, t, ns, p.Name); !runningAndReady(now) {
				return false, fmt.Errorf("the %s Pod is %s, Ready=%q", role, now.Status.Phase, podReady(now))
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the Pods did not come back: %v", err)
	}
}

// waitClusterConverged waits until the RayCluster is ready with its worker.
func (s *suite) waitClusterConverged(ctx context.Context, t *testing.T, ns, cluster string) {
	t.Helper()
	err := poll(ctx, func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: cluster}, rc); err != nil {
			return false, err
		}
		return rc.Status.State == rayv1.Ready && rc.Status.ReadyWorkerReplicas == 1,
			fmt.Errorf("cluster %s with %d ready workers", rc.Status.State, rc.Status.ReadyWorkerReplicas)
	})
	if err != nil {
		t.Errorf("the RayCluster did not converge: %v", err)
	}
}

// podObject gets a Pod.
func (s *suite) podObject(ctx context.Context, t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, p); err != nil {
		t.Fatalf("getting Pod %s: %v", name, err)
	}
	return p
}

func equalRecords(a, b podRecord) bool {
	return a.uid == b.uid && a.containers == b.containers && slices.Equal(a.raylets, b.raylets)
}
