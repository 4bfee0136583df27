package operator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/auditlog"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// failoverDeadline bounds the takeover: the Lease (15 s) expiring plus a
// retry period (2 s), with room for a loaded machine.
const failoverDeadline = 40 * time.Second

// auditDeadline bounds the wait for the audit log to catch up.
const auditDeadline = 10 * time.Second

// TestLeaderFailover runs two operator binaries with leader election against
// one API server, each as its own user so that the API server's audit log
// tells their requests apart. Only the leader writes; when the leader is
// killed (SIGKILL, no Lease release) in the middle of creating a cluster's
// Pods, the other takes over once the Lease expires and finishes the work
// with no duplicate Pod.
func TestLeaderFailover(t *testing.T) {
	binary := buildOperator(t)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	env := testenv.Start(t, testenv.WithAuditLog(auditLog))
	a := startOperator(t, binary, userKubeconfig(t, env, "operator-a"))
	waitReady(t, a)
	leaderA := waitLeaseHolder(t, env.Client, "")
	kb := userKubeconfig(t, env, "operator-b")
	injected := filepath.Join(filepath.Dir(kb), "INJECT")
	_ = os.Rename(kb, injected)
	b := startOperator(t, binary, injected)
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
	waitLeaseHolder(t, env.Client, leaderA)
	failover := time.Since(killed)
	t.Logf("leader killed; the other operator holds the Lease %v later", failover)

	waitPods(t, env.Client, ns, "during", 31)
	// A cluster created after the takeover gets its Pods: the new leader
	// reconciles, and has had its passes over "during" too.
	createCluster(t, env.Client, ns, "after", 1)
	waitPods(t, env.Client, ns, "after", 2)
	if n := countPods(t, env.Client, ns, "during"); n != 31 {
		t.Errorf("cluster during has %d Pods after the failover, want 31", n)
	}

	checkAudit(t, env.Client, auditLog, ns)
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
	last := ""
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, failoverDeadline, true, func(ctx context.Context) (bool, error) {
		var lease coordinationv1.Lease
		if err := c.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: leaseName}, &lease); err == nil {
			last = ptr.Deref(lease.Spec.HolderIdentity, "")
		}
		return last != "" && last != notHolder, nil
	})
	if err != nil {
		t.Fatalf("lease holder still %q after %v", last, failoverDeadline)
	}
	return last
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
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, failoverDeadline+readyDeadline, true, func(context.Context) (bool, error) {
		got = countPods(t, c, ns, cluster)
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("cluster %s has %d Pods, want %s", cluster, got, want)
	}
}

// checkAudit reads the API server's audit log: operator-b wrote nothing
// but Lease updates until it held the Lease; every Pod in ns has one
// successful creation in the log, but for those of the killed leader's
// last round of creates, which were stored while the leader was gone to
// read the answers (the API server logs no successful response to a client
// that is gone); and both operators created Pods (the log does tell them
// apart).
func checkAudit(t *testing.T, c client.Client, path, ns string) {
	t.Helper()
	const pods = 2 + 31 + 2
	events, bLeader, byA := readAuditUntil(t, c, path, ns, pods)
	podCreates := map[string]int{}
	for _, e := range events {
		if !e.IsWrite() || !strings.HasPrefix(e.User.Username, "operator-") {
			continue
		}
		if e.User.Username == "operator-b" && e.StageTimestamp.Time.Before(bLeader) && e.Resource() != "leases" {
			t.Errorf("operator-b wrote %s %s before it led", e.Verb, e.Resource())
		}
		if isPodCreation(e, ns) {
			podCreates[e.User.Username]++
		}
	}
	switch {
	case podCreates["operator-b"] != pods-byA:
		t.Errorf("operator-b has %d successful Pod creations in the audit log for the %d Pods created after it led", podCreates["operator-b"], pods-byA)
	case podCreates["operator-a"] > byA:
		t.Errorf("operator-a has %d successful Pod creations for the %d Pods created before it was killed (a duplicate)", podCreates["operator-a"], byA)
	case podCreates["operator-a"] < byA:
		t.Logf("%d Pods of operator-a have no successful creation in the audit log: the leader's in-flight round", byA-podCreates["operator-a"])
	}
	if podCreates["operator-a"] == 0 || podCreates["operator-b"] == 0 {
		t.Errorf("Pod creations by user: %v, want both operators", podCreates)
	}
	t.Logf("Pod creations by user: %v; %d Pods created before operator-b led", podCreates, byA)
}

// leaderGap is less than the time between the killing of the leader and the
// other operator's first Lease write, which the Lease's 15 s duration
// bounds from below, and more than the second a Pod's creation timestamp
// rounds away: a Pod created before operator-b's first Lease write less
// leaderGap is operator-a's.
const leaderGap = 5 * time.Second

// readAuditUntil reads the audit log until it records operator-b's first
// Lease write and a successful creation by operator-b of each of the Pods
// (of pods in ns) created after it, or a deadline passes. It returns what
// it read last (the caller checks it), the time of that Lease write and how
// many Pods were created before it. The API server writes an event's
// ResponseComplete stage after the client has its answer, so the last
// creations can reach the log a moment after their Pods are visible.
func readAuditUntil(t *testing.T, c client.Client, path, ns string, pods int) ([]auditlog.Event, time.Time, int) {
	t.Helper()
	var events []auditlog.Event
	var bLeader time.Time
	byA := 0
	_ = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, auditDeadline, true, func(context.Context) (bool, error) {
		events = readAudit(t, path)
		bLeader = firstLeaseWrite(events, "operator-b")
		if bLeader.IsZero() {
			return false, nil
		}
		byA = podsCreatedBefore(t, c, ns, bLeader.Add(-leaderGap))
		return podCreations(events, ns, "operator-b") >= pods-byA, nil
	})
	if bLeader.IsZero() {
		t.Fatal("the audit log shows no Lease write by operator-b")
	}
	return events, bLeader, byA
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

// podsCreatedBefore counts the Pods in ns created before t.
func podsCreatedBefore(t *testing.T, c client.Client, ns string, before time.Time) int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.CreationTimestamp.Time.Before(before) {
			n++
		}
	}
	return n
}

func isPodCreation(e auditlog.Event, ns string) bool {
	return e.IsWrite() && e.Verb == "create" && e.Resource() == "pods" && e.Succeeded() && e.Namespace() == ns
}

// podCreations counts user's successful Pod creations in ns.
func podCreations(events []auditlog.Event, ns, user string) int {
	n := 0
	for _, e := range events {
		if e.User.Username == user && isPodCreation(e, ns) {
			n++
		}
	}
	return n
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
