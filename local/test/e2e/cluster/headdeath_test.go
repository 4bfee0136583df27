package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// headDeathCluster has no GCS fault tolerance: a head that offers no CPU
// and one worker that offers one, so that the actor and the task below run
// on the worker. Requests fit the two-CPU node.
func headDeathCluster() *rayv1.RayCluster {
	return e2eutil.NewRayCluster("headdeath", "2.60.0").
		Head("0", e2eutil.Resources("400m", "1Gi"), e2eutil.Resources("1", "2Gi")).
		Worker("workers", 1, "1", e2eutil.Resources("400m", "1Gi"), e2eutil.Resources("1", "1Gi")).
		GracePeriod(5).
		Obj()
}

// workerTask runs a task that needs the worker's CPU and prints the IP of
// the node it ran on, and how many Ray nodes are alive.
const workerTask = `
import ray
ray.init()
print("alive", sum(1 for n in ray.nodes() if n["Alive"]))
print("ran on", ray.get(ray.remote(num_cpus=1)(ray.util.get_node_ip_address).remote(), timeout=60))
`

// headDeathTimeout bounds each phase: a head and a worker start (about 15 s
// each on two CPUs), the head restarts, the worker notices and restarts.
const headDeathTimeout = 3 * time.Minute

// TestHeadCrashWithoutGCSFaultTolerance (issue #22, scenario 3): the head's
// gcs_server is SIGKILLed in a RayCluster without GCS fault tolerance.
// KubeRay documents the outcome ("Fate-sharing without GCS fault
// tolerance"): the head Pod's container dies and is restarted in place per
// the Pod's restartPolicy (Always: KubeRay deletes neither Pod), the new
// head does not know the old workers, which die and are restarted by the
// node in turn, and the cluster's state is lost. So: the same two Pods,
// each with one more restart; a detached actor created before is gone; the
// RayCluster's HeadPodReady went False and came back, Provisioned stayed
// True, state ready with its worker; and a new task runs on the worker.
func TestHeadCrashWithoutGCSFaultTolerance(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	rc := headDeathCluster()
	shared.create(t, ns, rc)
	ctx, cancel := context.WithTimeout(t.Context(), 3*headDeathTimeout)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, rc.Name, "")
	worker := shared.waitWorkerGroup(ctx, t, ns, rc.Name, 1)
	shared.waitClusterReady(t, ns, rc.Name)
	out, err := shared.rayPython(ctx, ns, head, e2eutil.CreateCounter)
	if err != nil || !strings.Contains(out, "count 1") {
		t.Fatalf("creating the detached actor: %v\n%s", err, out)
	}
	before := shared.clusterPods(ctx, t, ns, rc.Name)
	t.Logf("cluster up, actor created after %v", time.Since(began).Round(time.Second))

	seen := watchHeadReady(ctx, t, ns, rc.Name)
	killedAt := killGCSServer(t, before[head])

	recovered := shared.waitRecovered(ctx, t, ns, rc.Name, before)
	t.Logf("head and worker restarted, cluster ready again %v after the kill", recovered.Sub(killedAt).Round(time.Second))
	logLastExits(t, shared.clusterPods(ctx, t, ns, rc.Name), killedAt)
	if c := seen.falseSeen(); c == nil {
		t.Errorf("HeadPodReady never went False while the head restarted")
	} else {
		t.Logf("HeadPodReady was False (%s: %s)", c.Reason, c.Message)
	}
	out = shared.retryPython(ctx, t, ns, head, workerTask)
	workerIP := shared.pod(ctx, t, ns, worker).Status.PodIP
	if !strings.Contains(out, "alive 2") || !strings.Contains(out, "ran on "+workerIP) {
		t.Errorf("after the recovery, want 2 alive nodes and the task on the worker (%s):\n%s", workerIP, out)
	}
	out, err = shared.rayPython(ctx, ns, head, e2eutil.ReadCounter)
	if err == nil || !strings.Contains(out+err.Error(), "Failed to look up actor") {
		t.Errorf("the detached actor survived a head crash without GCS fault tolerance (%v):\n%s", err, out)
	}
	shared.checkNoPodDeleted(ctx, t, ns)
	t.Logf("task ran %v after the kill; done in %v", time.Since(killedAt).Round(time.Second), time.Since(began).Round(time.Second))
}

// killGCSServer SIGKILLs the gcs_server of a head Pod from the host and
// returns when. The process is found by its executable's name and its
// cgroup, which names the Ray container's ID: other clusters' processes
// (another suite's, left running) may have the same IP.
func killGCSServer(t *testing.T, head *corev1.Pod) time.Time {
	t.Helper()
	id := e2eutil.ContainerID(head, head.Spec.Containers[0].Name)
	killed, err := e2eutil.KillContainerProcess(id, "gcs_server")
	if err != nil || len(killed) != 1 {
		t.Fatalf("killing the gcs_server of %s (container %q): %v, pids %v", head.Name, id, err, killed)
	}
	t.Logf("SIGKILL to the gcs_server of %s (%s), host pid %v", head.Name, head.Status.PodIP, killed)
	return time.Now()
}

// clusterPods returns a cluster's Pods by name.
func (s *suite) clusterPods(ctx context.Context, t *testing.T, ns, cluster string) map[string]*corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := s.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCluster: cluster}); err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range pods.Items {
		out[pods.Items[i].Name] = &pods.Items[i]
	}
	return out
}

// pod returns the Pod ns/name.
func (s *suite) pod(ctx context.Context, t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitRecovered waits until the cluster's Pods are the same Pods as before
// (same UIDs), each running and ready with one restart more, and the
// RayCluster says so: state ready, every worker ready, HeadPodReady and
// RayClusterProvisioned True. It returns when that was first seen.
func (s *suite) waitRecovered(ctx context.Context, t *testing.T, ns, cluster string, before map[string]*corev1.Pod) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, headDeathTimeout)
	defer cancel()
	err := poll(ctx, func() (bool, error) {
		now := s.clusterPods(ctx, t, ns, cluster)
		for name, old := range before {
			p := now[name]
			switch {
			case p == nil || p.UID != old.UID:
				return false, fmt.Errorf("Pod %s was replaced; Pods now %v", name, podNames(now))
			case restarts(p) != restarts(old)+1 || !runningAndReady(p):
				return false, fmt.Errorf("Pod %s: %d restarts (was %d), running and ready %v", name, restarts(p), restarts(old), runningAndReady(p))
			}
		}
		if len(now) != len(before) {
			return false, fmt.Errorf("Pods now %v, before %d", podNames(now), len(before))
		}
		return clusterRecovered(ctx, s.Client, ns, cluster, int32(len(before)-1))
	})
	if err != nil {
		t.Fatalf("RayCluster %s did not recover: %v", cluster, err)
	}
	return time.Now()
}

// clusterRecovered checks the RayCluster's status after an outage: state
// ready, workers ready, HeadPodReady and RayClusterProvisioned True.
func clusterRecovered(ctx context.Context, c client.Client, ns, name string, workers int32) (bool, error) {
	rc := &rayv1.RayCluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc); err != nil {
		return false, err
	}
	st := &rc.Status
	ok := st.State == rayv1.Ready && st.ReadyWorkerReplicas == workers &&
		meta.IsStatusConditionTrue(st.Conditions, string(rayv1.HeadPodReady)) &&
		meta.IsStatusConditionTrue(st.Conditions, string(rayv1.RayClusterProvisioned))
	return ok, fmt.Errorf("state %q, ready workers %d of %d, conditions %v", st.State, st.ReadyWorkerReplicas, workers, st.Conditions)
}

// logLastExits logs when and how each Pod's containers last exited,
// relative to since.
func logLastExits(t *testing.T, pods map[string]*corev1.Pod, since time.Time) {
	t.Helper()
	for name, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			if x := cs.LastTerminationState.Terminated; x != nil {
				t.Logf("%s/%s exited %v after the kill (exit code %d, %s); running again since +%v", name, cs.Name,
					x.FinishedAt.Sub(since).Round(time.Second), x.ExitCode, x.Reason, startedAt(cs).Sub(since).Round(time.Second))
			}
		}
	}
}

func startedAt(cs corev1.ContainerStatus) time.Time {
	if cs.State.Running != nil {
		return cs.State.Running.StartedAt.Time
	}
	return time.Time{}
}

func podNames(pods map[string]*corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for n := range pods {
		names = append(names, n)
	}
	return names
}

// headReadyWatch records, through a watch of the RayCluster, whether its
// HeadPodReady condition was ever False and whether RayClusterProvisioned
// ever was anything but True.
type headReadyWatch struct {
	mu              sync.Mutex
	notReady        *metav1.Condition // the first HeadPodReady seen False
	provisionedLost []string
}

// falseSeen returns the first HeadPodReady condition seen False, or nil.
func (w *headReadyWatch) falseSeen() *metav1.Condition {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notReady
}

// watchHeadReady starts following the RayCluster; a Provisioned condition
// that is not True fails t when the test ends.
func watchHeadReady(ctx context.Context, t *testing.T, ns, name string) *headReadyWatch {
	t.Helper()
	wc, err := client.NewWithWatch(shared.Cluster.RESTConfig(), client.Options{Scheme: shared.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &rayv1.RayClusterList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
	if err != nil {
		t.Fatal(err)
	}
	hw := &headReadyWatch{}
	go func() {
		for ev := range w.ResultChan() {
			if rc, ok := ev.Object.(*rayv1.RayCluster); ok {
				hw.observe(rc)
			}
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		hw.mu.Lock()
		defer hw.mu.Unlock()
		if len(hw.provisionedLost) > 0 {
			t.Errorf("RayClusterProvisioned left True during the outage: %v", hw.provisionedLost)
		}
	})
	return hw
}

func (w *headReadyWatch) observe(rc *rayv1.RayCluster) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.HeadPodReady)); c != nil && c.Status == metav1.ConditionFalse && w.notReady == nil {
		w.notReady = c
	}
	if c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterProvisioned)); c == nil || c.Status != metav1.ConditionTrue {
		w.provisionedLost = append(w.provisionedLost, fmt.Sprintf("%v", c))
	}
}

// checkNoPodDeleted fails t when the operator deleted a Pod of ns (its
// DeletedHeadPod and DeletedWorkerPod events): KubeRay leaves a Pod whose
// container restarts alone.
func (s *suite) checkNoPodDeleted(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	events := &corev1.EventList{}
	if err := s.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "DeletedHeadPod" || e.Reason == "DeletedWorkerPod" {
			t.Errorf("the operator deleted a Pod: %s %s", e.Reason, e.Message)
		}
	}
}
