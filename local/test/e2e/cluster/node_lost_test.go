package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// nodeLostRayCluster tolerates an unreachable or not-ready node for 5 s
// instead of the API server's default 300 s, so that the taint manager
// evicts its Pods soon after the node is lost.
func nodeLostRayCluster() *rayv1.RayCluster {
	return e2eutil.NewRayCluster("node-lost", "2.52.0").
		Head("1", e2eutil.Resources("500m", "2Gi"), e2eutil.Resources("1", "2Gi")).
		Worker("workers", 1, "1", e2eutil.Resources("500m", "1Gi"), e2eutil.Resources("1", "1Gi")).
		TolerateNodeLoss(5).
		Obj()
}

// witnessNode is a second Node, cordoned, whose Lease the test renews:
// with one healthy Node left, kube-controller-manager's node lifecycle
// controller evicts the lost Node's Pods, as in a cluster of several
// nodes. With every Node lost it would assume its own connectivity failed
// and evict nothing (its "master disruption mode").
const witnessNode = "witness"

// startWitness registers the witness Node Ready and renews its Lease every
// 5 s until t ends; it deletes both then.
func (s *suite) startWitness(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	now := metav1.Now()
	// A Node's status is kept on create, as a kubelet registers it.
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: witnessNode, Labels: map[string]string{corev1.LabelHostname: witnessNode}},
		Spec:       corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourcePods: resource.MustParse("10")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}},
		},
	}
	created, err := s.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil || !nodeIsReady(created) {
		t.Fatalf("registering the witness Node Ready: %v (%+v)", err, created)
	}
	holder, duration := witnessNode, int32(40)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: witnessNode, Namespace: corev1.NamespaceNodeLease},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
	leases := s.Clientset.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the witness Node's Lease: %v", err)
	}
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
			}
			if l, err := leases.Get(ctx, witnessNode, metav1.GetOptions{}); err == nil {
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
			}
		}
	}()
	t.Cleanup(func() {
		<-renewed
		bg := context.Background()
		_ = s.Clientset.CoreV1().Nodes().Delete(bg, witnessNode, metav1.DeleteOptions{})
		_ = leases.Delete(bg, witnessNode, metav1.DeleteOptions{})
	})
}

// TestNodeLostPodsReplaced (issue #22, scenario 4, part 2): the node agent
// (its process) is down past the node-monitor grace period while another Node
// stays healthy. The control plane marks the lost Node Unknown, taints it
// and evicts the RayCluster's Pods (which tolerate that for 5 s): they
// wait Terminating, since only their node can confirm their end, and the
// operator, like KubeRay, counts a terminating Pod until it is gone. Once
// the node is back it stops the evicted Pods' containers and removes them, the
// operator creates a new head and worker, and the RayCluster converges on
// them.
func TestNodeLostPodsReplaced(t *testing.T) {
	ns := shared.namespace(t)
	shared.startWitness(t)
	shared.create(t, ns, nodeLostRayCluster())
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	shared.waitClusterConverged(ctx, t, ns, "node-lost")
	head := shared.waitHead(ctx, t, ns, "node-lost", "")
	worker := shared.workerPod(ctx, t, ns, "node-lost")
	old := map[string]*corev1.Pod{"head": shared.podObject(ctx, t, ns, head), "worker": worker}
	records := map[string]podRecord{}
	for role, p := range old {
		records[role] = recordPod(t, p)
	}

	outage := shared.stopNodeAgent(ctx, t, old)
	evicted := shared.waitEvicted(ctx, t, ns, old)
	t.Logf("both Pods evicted (Terminating) %v after KillNode", (outage + evicted).Round(time.Second))
	t.Logf("RayCluster Pods at StartNode: %s", shared.podNames(ctx, t, ns))

	startAt := time.Now()
	if err := shared.Cluster.StartNode(ctx); err != nil {
		t.Fatalf("StartNode: %v", err)
	}
	for _, p := range old {
		shared.waitPodGone(ctx, t, ns, p.Name)
	}
	t.Logf("the evicted Pods were removed %v after StartNode began", time.Since(startAt).Round(time.Second))
	// Their containers ended before they were removed (a node that
	// adopted them stops them, not only their API objects).
	for role, r := range records {
		for _, pid := range r.raylets {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the raylet (pid %d) of the removed %s Pod still runs (%v)", pid, role, err)
			}
		}
	}
	newHead := shared.waitHead(ctx, t, ns, "node-lost", head)
	shared.waitClusterConverged(ctx, t, ns, "node-lost")
	t.Logf("RayCluster ready on the new head %s %v after StartNode began", newHead, time.Since(startAt).Round(time.Second))
	err := poll(ctx, func() (bool, error) {
		workers, err := shared.rayPods(ctx, ns, "node-lost", "worker")
		if err != nil || len(workers) != 1 || workers[0].Name == worker.Name || !runningAndReady(&workers[0]) {
			return false, fmt.Errorf("%d worker Pods (%v), want one ready replacement of %s", len(workers), err, worker.Name)
		}
		out, err := shared.rayPython(ctx, ns, newHead, aliveRayNodes)
		return strings.Contains(out, "alive 2"), fmt.Errorf("%v: %s", err, out)
	})
	if err != nil {
		t.Errorf("no Ray cluster of the new head and a replacement worker: %v", err)
	}
}

// aliveRayNodes prints how many nodes the Ray cluster counts alive.
const aliveRayNodes = "import ray; ray.init(); print('alive', len([n for n in ray.nodes() if n['Alive']]))"

// waitEvicted waits until every Pod of pods is terminating with the
// DisruptionTarget condition the taint manager sets, and returns how long
// that took.
func (s *suite) waitEvicted(ctx context.Context, t *testing.T, ns string, pods map[string]*corev1.Pod) time.Duration {
	t.Helper()
	began := time.Now()
	err := poll(ctx, func() (bool, error) {
		for role, p := range pods {
			now := s.podObject(ctx, t, ns, p.Name)
			if now.DeletionTimestamp == nil || !hasCondition(now, corev1.DisruptionTarget) {
				return false, fmt.Errorf("the %s Pod: deletion %v, conditions %+v", role, now.DeletionTimestamp, now.Status.Conditions)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the lost node's Pods were not evicted: %v", err)
	}
	return time.Since(began)
}

// podNames lists the namespace's Pods with their phase and whether they
// are terminating.
func (s *suite) podNames(ctx context.Context, t *testing.T, ns string) string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := s.Client.List(ctx, pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "%s %s terminating=%v; ", p.Name, p.Status.Phase, p.DeletionTimestamp != nil)
	}
	return b.String()
}

// waitPodGone waits until the Pod named name no longer exists.
func (s *suite) waitPodGone(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	err := poll(ctx, func() (bool, error) {
		err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.Pod{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Errorf("get: %v", err)
	})
	if err != nil {
		t.Fatalf("Pod %s was not removed: %v", name, err)
	}
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasCondition(p *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
