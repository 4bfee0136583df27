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
// but Lease updates until it held the Lease; every successful Pod creation
// in ns left a Pod (none was a duplicate that had to be removed); and both
// operators created Pods (the log does tell them apart).
func checkAudit(t *testing.T, path, ns string) {
	t.Helper()
	events := readAuditUntil(t, path, ns, 2+31+2)
	// (readAuditUntil gives up after auditDeadline when one creation never
	// shows, see below.)
	var bLeader time.Time
	for _, e := range events {
		if e.User.Username == "operator-b" && e.IsWrite() && e.Succeeded() && e.Resource() == "leases" {
			bLeader = e.StageTimestamp.Time
			break
		}
	}
	if bLeader.IsZero() {
		t.Fatal("the audit log shows no Lease write by operator-b")
	}
	podCreates := map[string]int{}
	for _, e := range events {
		if !e.IsWrite() || !strings.HasPrefix(e.User.Username, "operator-") {
			continue
		}
		if e.User.Username == "operator-b" && e.StageTimestamp.Time.Before(bLeader) && e.Resource() != "leases" {
			t.Errorf("operator-b wrote %s %s before it led", e.Verb, e.Resource())
		}
		if e.Verb == "create" && e.Resource() == "pods" && e.Succeeded() && e.Namespace() == ns {
			podCreates[e.User.Username]++
		}
	}
	total := podCreates["operator-a"] + podCreates["operator-b"]
	pods := 2 + 31 + 2
	// More creations than Pods is a duplicate. One fewer is the create the
	// leader had in flight when it was killed: the Pod was stored, but the
	// API server logs no successful response to a client that is gone.
	switch {
	case total > pods:
		t.Errorf("%d successful Pod creations for %d Pods (a duplicate): %v", total, pods, podCreates)
	case total < pods-1:
		t.Errorf("%d successful Pod creations for %d Pods: %v", total, pods, podCreates)
	case total == pods-1:
		t.Logf("one Pod creation has no successful response in the audit log: the leader's in-flight request")
	}
	if podCreates["operator-a"] == 0 || podCreates["operator-b"] == 0 {
		t.Errorf("Pod creations by user: %v, want both operators", podCreates)
	}
	t.Logf("Pod creations by user: %v", podCreates)
}

// readAuditUntil reads the audit log until it records want successful Pod
// creations in ns, or a deadline passes, and returns what it read last
// (the caller checks it). The API server writes an event's
// ResponseComplete stage after the client has its answer, so the last
// creations can reach the log a moment after their Pods are visible.
func readAuditUntil(t *testing.T, path, ns string, want int) []auditlog.Event {
	t.Helper()
	var events []auditlog.Event
	_ = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, auditDeadline, true, func(context.Context) (bool, error) {
		events = readAudit(t, path)
		return podCreations(events, ns) >= want, nil
	})
	return events
}

func podCreations(events []auditlog.Event, ns string) int {
	n := 0
	for _, e := range events {
		if e.IsWrite() && e.Verb == "create" && e.Resource() == "pods" && e.Succeeded() && e.Namespace() == ns {
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
