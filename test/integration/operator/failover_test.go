package operator_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/auditlog"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// takeoverBound bounds the time from the leader's death to the other
// operator's holding the Lease on an idle machine: the other takes over
// operator.LeaseDuration after it last saw the Lease change, which it sees
// at its next try (every RetryPeriod, jittered by up to JitterFactor more)
// and then waits for the try after the expiry; the dead leader's last
// renewal came before its death.
var takeoverBound = operator.LeaseDuration + 2*time.Duration(float64(operator.RetryPeriod)*(1+leaderelection.JitterFactor))

// loadMargin is what a loaded 2-core machine may add to a wait for a
// signal (API server answers, process scheduling): it only bounds how long
// a broken run waits before it fails.
const loadMargin = 30 * time.Second

// leaseDeadline bounds each wait for a Lease holder.
var leaseDeadline = takeoverBound + loadMargin

// auditDeadline bounds the wait for the audit log to catch up.
const auditDeadline = loadMargin

// TestLeaderFailover runs two operator binaries with leader election against
// one API server, each as its own user so that the API server's audit log
// tells their requests apart. Only the leader writes; when the leader is
// killed (SIGKILL, no Lease release) in the middle of creating a cluster's
// Pods, the other takes over once the Lease expires (never earlier) and
// finishes the work with no duplicate Pod.
func TestLeaderFailover(t *testing.T) {
	binary := buildOperator(t)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	env := testenv.Start(t, testenv.WithAuditLog(auditLog))
	a := startOperator(t, binary, userKubeconfig(t, env, "operator-a"))
	waitReady(t, a)
	leaderA := waitLeaseHolder(t, env.Client, "")
	b := startOperator(t, binary, userKubeconfig(t, env, "operator-b"))
	waitReady(t, b)

	ns := env.Namespace(t)
	createCluster(t, env.Client, ns, "before", 1)
	waitPods(t, env.Client, ns, "before", 2)

	createCluster(t, env.Client, ns, "during", 30)
	waitPodsAtLeast(t, env.Client, ns, "during", 1)
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = a.cmd.Wait()
	t.Logf("leader killed with %d of the 31 Pods of cluster during", countPods(t, env.Client, ns, "during"))
	waitTakeover(t, env.Client, leaderA)
	t.Logf("the other operator holds the Lease %v after the kill", time.Since(killed))

	waitPods(t, env.Client, ns, "during", 31)
	// A cluster created after the takeover gets its Pods: the new leader
	// reconciles, and has had its passes over "during" too.
	createCluster(t, env.Client, ns, "after", 1)
	waitPods(t, env.Client, ns, "after", 2)
	if n := countPods(t, env.Client, ns, "during"); n != 31 {
		t.Errorf("cluster during has %d Pods after the failover, want 31", n)
	}

	checkAudit(t, auditLog, ns)
}

// userKubeconfig writes a kubeconfig of a new cluster-admin user.
func userKubeconfig(t *testing.T, env *testenv.Env, user string) string {
	t.Helper()
	data, err := env.AddUser(user, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	return writeKubeconfig(t, data)
}

// waitLeaseHolder waits until the leader Lease has a holder other than
// notHolder and returns it.
func waitLeaseHolder(t *testing.T, c client.Client, notHolder string) string {
	t.Helper()
	return ptr.Deref(pollLease(t, c, func(l *coordinationv1.Lease) bool {
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		return holder != "" && holder != notHolder
	}).Spec.HolderIdentity, "")
}

// waitTakeover waits until a holder other than old holds the Lease, and
// checks that it took the Lease no earlier than the Lease's duration after
// old's last renewal (the last the test saw, which is at least as late as
// the last the new holder saw): a candidate that did not wait for the
// Lease to expire would lead beside a live leader.
func waitTakeover(t *testing.T, c client.Client, old string) {
	t.Helper()
	var lastRenew time.Time
	lease := pollLease(t, c, func(l *coordinationv1.Lease) bool {
		if holder := ptr.Deref(l.Spec.HolderIdentity, ""); holder == old || holder == "" {
			if l.Spec.RenewTime != nil {
				lastRenew = l.Spec.RenewTime.Time
			}
			return false
		}
		return true
	})
	if lastRenew.IsZero() {
		t.Fatalf("the Lease was never seen renewed by %q", old)
	}
	if got := time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second; got != operator.LeaseDuration {
		t.Errorf("Lease duration %v, want operator.LeaseDuration %v", got, operator.LeaseDuration)
	}
	// MicroTime keeps microseconds: allow for the rounding of both times.
	if acquired := lease.Spec.AcquireTime; acquired == nil || acquired.Sub(lastRenew) < operator.LeaseDuration-time.Millisecond {
		t.Errorf("%s acquired the Lease at %v, its last renewal by %s was at %v: less than the Lease duration %v apart",
			ptr.Deref(lease.Spec.HolderIdentity, ""), acquired, old, lastRenew, operator.LeaseDuration)
	}
}

// pollLease polls the leader Lease until done holds and returns it.
func pollLease(t *testing.T, c client.Client, done func(*coordinationv1.Lease) bool) *coordinationv1.Lease {
	t.Helper()
	lease := &coordinationv1.Lease{}
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, leaseDeadline, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: leaseName}, lease); err != nil {
			return false, nil
		}
		return done(lease), nil
	})
	if err != nil {
		t.Fatalf("lease holder still %q after %v", ptr.Deref(lease.Spec.HolderIdentity, ""), leaseDeadline)
	}
	return lease
}

// createCluster creates a RayCluster with one worker group of n workers.
func createCluster(t *testing.T, c client.Client, ns, name string, workers int32) {
	t.Helper()
	container := func(n string) []corev1.Container {
		return []corev1.Container{{Name: n, Image: "rayproject/ray:2.60.0"}}
	}
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container("ray-head")}}},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "w", Replicas: ptr.To(workers), MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To(workers),
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container("ray-worker")}},
			}},
		},
	}
	if err := c.Create(t.Context(), rc); err != nil {
		t.Fatal(err)
	}
}

func countPods(t *testing.T, c client.Client, ns, cluster string) int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCluster: cluster}); err != nil {
		t.Fatal(err)
	}
	return len(pods.Items)
}

// waitPods waits until a cluster has exactly n Pods.
func waitPods(t *testing.T, c client.Client, ns, cluster string, n int) {
	t.Helper()
	waitPodCount(t, c, ns, cluster, func(got int) bool { return got == n }, fmt.Sprintf("exactly %d", n))
}

// waitPodsAtLeast waits until a cluster has n Pods or more.
func waitPodsAtLeast(t *testing.T, c client.Client, ns, cluster string, n int) {
	t.Helper()
	waitPodCount(t, c, ns, cluster, func(got int) bool { return got >= n }, fmt.Sprintf("at least %d", n))
}

func waitPodCount(t *testing.T, c client.Client, ns, cluster string, ok func(int) bool, want string) {
	t.Helper()
	got := 0
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, leaseDeadline+readyDeadline, true, func(context.Context) (bool, error) {
		got = countPods(t, c, ns, cluster)
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("cluster %s has %d Pods, want %s", cluster, got, want)
	}
}

// checkAudit reads the API server's audit log: operator-b wrote nothing
// but Lease updates until it held the Lease; the successful Pod creations
// in ns are no more than the Pods (no duplicate), and with the killed
// leader's creations that got no successful answer (its last round, sent
// concurrently, can be stored while it is gone to read the answers) they
// account for every Pod; both operators created Pods.
func checkAudit(t *testing.T, path, ns string) {
	t.Helper()
	const pods = 2 + 31 + 2
	events, bLeader, creates := readAuditUntil(t, path, ns, pods)
	for _, e := range events {
		if e.User.Username == "operator-b" && e.IsWrite() && e.StageTimestamp.Time.Before(bLeader) && e.Resource() != "leases" {
			t.Errorf("operator-b wrote %s %s before it led", e.Verb, e.Resource())
		}
	}
	a, b, lost := creates.ok["operator-a"], creates.ok["operator-b"], creates.unanswered["operator-a"]
	switch {
	case a+b > pods:
		t.Errorf("%d successful Pod creations (operator-a %d, operator-b %d) for %d Pods: a duplicate", a+b, a, b, pods)
	case a+b+lost < pods:
		t.Errorf("%d Pods, but %d successful creations (operator-a %d, operator-b %d) and %d unanswered ones of the killed leader", pods, a+b, a, b, lost)
	}
	if a+lost == 0 || b == 0 {
		t.Errorf("Pod creations by user: %v, want both operators", creates.ok)
	}
	t.Logf("successful Pod creations by user: %v; %d of operator-a unanswered", creates.ok, lost)
}

// podCreates counts the Pod creations of one namespace by user: those the
// API server answered with success, and those it received but answered
// otherwise or not at all (yet).
type podCreates struct {
	ok, unanswered map[string]int
}

// countPodCreates counts the Pod creations in ns (the log has each
// request's RequestReceived line: testenv's audit policy).
func countPodCreates(events []auditlog.Event, ns string) podCreates {
	answered := map[string]bool{}
	for _, e := range events {
		if e.IsWrite() && isPodCreation(e, ns) && e.Succeeded() {
			answered[e.AuditID] = true
		}
	}
	c := podCreates{ok: map[string]int{}, unanswered: map[string]int{}}
	for _, e := range events {
		switch {
		case e.IsWrite() && isPodCreation(e, ns) && e.Succeeded():
			c.ok[e.User.Username]++
		case e.IsReceived() && isPodCreation(e, ns) && !answered[e.AuditID]:
			c.unanswered[e.User.Username]++
		}
	}
	return c
}

// readAuditUntil reads the audit log until it records operator-b's first
// Lease write, every Pod creation operator-b sent has its answer, and the
// creations account for pods Pods, or a deadline passes. It returns what
// it read last (the caller checks it), the time of that Lease write and
// the creations. The API server writes an answer's line before the client
// has it, but the Pod is visible to others a moment earlier.
func readAuditUntil(t *testing.T, path, ns string, pods int) ([]auditlog.Event, time.Time, podCreates) {
	t.Helper()
	var events []auditlog.Event
	var bLeader time.Time
	var creates podCreates
	_ = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, auditDeadline, true, func(context.Context) (bool, error) {
		events = readAudit(t, path)
		bLeader = firstLeaseWrite(events, "operator-b")
		creates = countPodCreates(events, ns)
		seen := creates.ok["operator-a"] + creates.ok["operator-b"] + creates.unanswered["operator-a"]
		return !bLeader.IsZero() && creates.unanswered["operator-b"] == 0 && seen >= pods, nil
	})
	if bLeader.IsZero() {
		t.Fatal("the audit log shows no Lease write by operator-b")
	}
	return events, bLeader, creates
}

// firstLeaseWrite is the time of user's first successful Lease write, zero
// if there is none.
func firstLeaseWrite(events []auditlog.Event, user string) time.Time {
	for _, e := range events {
		if e.User.Username == user && e.IsWrite() && e.Succeeded() && e.Resource() == "leases" {
			return e.StageTimestamp.Time
		}
	}
	return time.Time{}
}

// isPodCreation reports whether e is a line of a Pod creation in ns.
func isPodCreation(e auditlog.Event, ns string) bool {
	return e.Verb == "create" && e.ResourcePath() == "pods" && e.Namespace() == ns
}

// readAudit parses the complete lines of the audit log.
func readAudit(t *testing.T, path string) []auditlog.Event {
	t.Helper()
	events, err := auditlog.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return events
}
