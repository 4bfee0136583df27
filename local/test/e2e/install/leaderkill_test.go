package install_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// operatorBinary is the operator's process in its container (argv[0]'s
// base name: the chart's command, /ray-operator).
const operatorBinary = "ray-operator"

// testLeaderKilled SIGKILLs the leading operator's process from the host,
// as a node's OOM killer or a crash would end it: unlike a deleted Pod it
// cannot release the Lease, so the other replica takes over only once the
// Lease has expired. Then a change to the RayCluster must be acted on.
func testLeaderKilled(t *testing.T, r *switchRun) {
	r.setValue("replicas", "2")
	shared.helmApply(t, "upgrade", r.release)
	pods := shared.operatorPods(t, 2)
	held, err := shared.lease(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	leader, other := splitLeader(t, pods, held)
	mark := len(r.loop.Replies())
	killed, err := e2eutil.KillContainerProcess(e2eutil.ContainerID(&leader, leader.Spec.Containers[0].Name), operatorBinary)
	if err != nil || len(killed) != 1 {
		t.Fatalf("killing the operator in Pod %s: %v (host pids %v)", leader.Name, err, killed)
	}
	killedAt := time.Now()
	stop := keepDown(t, leader)
	now := shared.waitHolderChange(t, ptr.Deref(held.Spec.HolderIdentity, ""))
	acquired := now.Spec.AcquireTime.Time
	t.Logf("SIGKILL to the leader %s (host pid %v; its restarts killed too: %v); %s leads %v later (acquired %v after the kill; Lease of %ds)",
		leader.Name, killed, stop(), holderPod(now), time.Since(killedAt).Round(time.Millisecond), acquired.Sub(killedAt).Round(time.Millisecond),
		ptr.Deref(held.Spec.LeaseDurationSeconds, 0))
	if holderPod(now) != other.Name {
		t.Errorf("after the kill %s holds the Lease, want the other replica %s", ptr.Deref(now.Spec.HolderIdentity, ""), other.Name)
	}
	// Not released: taken over only once expired.
	expiry := held.Spec.RenewTime.Add(time.Duration(ptr.Deref(held.Spec.LeaseDurationSeconds, 0)) * time.Second)
	if acquired.Before(expiry) {
		t.Errorf("the Lease was acquired at %v, before the killed leader's expired (%v): was it released?", acquired, expiry)
	}
	shared.scaleWorkers(t, r.serviceNS, 3)
	requireRestarted(t, leader)
	requireNoFailedRequests(t, r.run, "from the leader's kill to the scale-up acted on by the new leader", mark)
}

// keepDown SIGKILLs the operator again whenever the node restarts the
// killed container, until the returned function is called; that returns
// the host pids killed so. Killed once, the restarted container races
// the other replica for the expired Lease (it won in one of the first
// two runs); kept down, it leaves the Lease to the other replica.
func keepDown(t *testing.T, p corev1.Pod) func() []int {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan []int, 1)
	go func() {
		var pids []int
		defer func() { done <- pids }()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := &corev1.Pod{}
			if err := shared.Client.Get(ctx, client.ObjectKeyFromObject(&p), now); err != nil {
				continue
			}
			killed, _ := e2eutil.KillContainerProcess(e2eutil.ContainerID(now, p.Spec.Containers[0].Name), operatorBinary)
			pids = append(pids, killed...)
		}
	}()
	return func() []int {
		cancel()
		return <-done
	}
}

// splitLeader returns the Pod that holds the Lease and the other one.
func splitLeader(t *testing.T, pods []corev1.Pod, l *coordinationv1.Lease) (leader, other corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if p.Name == holderPod(l) {
			leader = p
		} else {
			other = p
		}
	}
	if leader.Name == "" || other.Name == "" {
		t.Fatalf("the Lease's holder %q is not one of two operator Pods", ptr.Deref(l.Spec.HolderIdentity, ""))
	}
	return leader, other
}

// waitHolderChange waits until an identity other than was holds the
// Lease, and returns it.
func (s *suite) waitHolderChange(t *testing.T, was string) *coordinationv1.Lease {
	t.Helper()
	return s.waitLease(t, "nobody took the Lease over from "+was, func(l *coordinationv1.Lease) bool {
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		return holder != "" && holder != was
	})
}

// requireRestarted checks the killed Pod is the same Pod with its
// container restarted by the node, and Ready again.
func requireRestarted(t *testing.T, killed corev1.Pod) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), helmTimeout)
	defer cancel()
	p := &corev1.Pod{}
	err := e2eutil.Poll(ctx, 200*time.Millisecond, func() (bool, error) {
		if err := shared.Client.Get(ctx, client.ObjectKey{Namespace: helmchart.ReleaseNamespace, Name: killed.Name}, p); err != nil {
			return false, err
		}
		return p.UID == killed.UID && e2eutil.Restarts(p) > e2eutil.Restarts(&killed) && e2eutil.RunningAndReady(p),
			fmt.Errorf("Pod %s: UID %s (was %s), %d restarts (were %d), phase %s", p.Name, p.UID, killed.UID, e2eutil.Restarts(p), e2eutil.Restarts(&killed), p.Status.Phase)
	})
	if err != nil {
		t.Errorf("the killed operator's Pod is not back: %v", err)
	}
}
