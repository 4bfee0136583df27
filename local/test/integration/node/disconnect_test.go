package node_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	localnode "github.com/ray-operator/ray-operator/local/internal/node"
)

// sleepers is how many pods besides "steady" testDisconnect keeps running
// across the outage.
const sleepers = 7

// nodeReady is the Node's Ready condition status, "" when it has none.
func nodeReady(t *testing.T, c *cluster) corev1.ConditionStatus {
	t.Helper()
	node, err := c.cs.CoreV1().Nodes().Get(t.Context(), "ray-local", metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status
		}
	}
	return ""
}

// waitNodeReady waits until the Node's Ready condition is want and
// returns how long that took.
func waitNodeReady(t *testing.T, c *cluster, want corev1.ConditionStatus, within time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, within, true, func(context.Context) (bool, error) {
		return nodeReady(t, c) == want, nil
	})
	if err != nil {
		t.Fatalf("node Ready never became %s: %v (is %q)", want, err, nodeReady(t, c))
	}
	return time.Since(began)
}

// mainContainer is the status of a pod's container "main".
func mainContainer(p *corev1.Pod) corev1.ContainerStatus {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == "main" {
			return s
		}
	}
	return corev1.ContainerStatus{}
}

// testDisconnect stops the node agent's API side for longer than the
// node-monitor grace period (localnode.NodeMonitorGracePeriod, 20 s): the
// Node turns Unknown and its pod Ready=False, the kubelet API is gone, a
// pod deleted meanwhile stays Terminating; after Reconnect the running
// pod is reported again with the same container, start time and restart
// count and its output of the outage in its log, and the deleted pod is
// stopped and removed. Sleepers, more pods kept across the outage, time
// the republication of several pods.
func testDisconnect(t *testing.T, c *cluster) {
	isRunningReady := func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && readyCondition(p).Status == corev1.ConditionTrue
	}
	steady := createAndWait(t, c, sleepPod("steady", "i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done"), "Running and Ready", isRunningReady)
	defer deleteAndWait(t, c, "steady")
	createAndWait(t, c, sleepPod("doomed", "exec sleep 3600"), "Running and Ready", isRunningReady)
	before := map[string]corev1.ContainerStatus{"steady": mainContainer(steady)}
	names := make([]string, sleepers)
	for i := range names {
		names[i] = fmt.Sprintf("sleeper-%d", i)
		before[names[i]] = mainContainer(createAndWait(t, c, sleepPod(names[i], "exec sleep 3600"), "Running and Ready", isRunningReady))
	}
	defer deleteAndWait(t, c, names...)

	if err := c.node.Disconnect(); err != nil {
		t.Fatalf("Disconnect: %v", err)
	}
	disconnected := time.Now()
	unknownAfter := waitNodeReady(t, c, corev1.ConditionUnknown, timeout)
	marked := waitPod(t, c, "steady", "Ready=False", func(p *corev1.Pod) bool { return readyCondition(p).Status == corev1.ConditionFalse })
	t.Logf("node Unknown %v after Disconnect; steady pod marked Ready=False (%s) %v after it", unknownAfter.Round(time.Second), readyCondition(marked).Reason, time.Since(disconnected).Round(time.Second))
	// The grace period the control plane was given, not kube-controller-
	// manager's default (50 s), decided it.
	if unknownAfter >= 50*time.Second {
		t.Errorf("the Node turned Unknown %v after Disconnect: the node-monitor grace period %v was not applied", unknownAfter.Round(time.Second), localnode.NodeMonitorGracePeriod)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed node certificate
	if resp, err := client.Get("https://" + c.kubelet.String() + "/containerLogs/" + namespace + "/steady/main"); err == nil {
		_ = resp.Body.Close()
		t.Errorf("the kubelet API answered %s while the node was disconnected", resp.Status)
	}
	if err := c.cs.CoreV1().Pods(namespace).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if p, err := c.cs.CoreV1().Pods(namespace).Get(t.Context(), "doomed", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("the deleted pod should wait for the node, Terminating: %v %+v", err, p)
	}

	reconnectAt := time.Now()
	if err := c.node.Reconnect(t.Context()); err != nil {
		t.Fatalf("Reconnect: %v", err)
	}
	t.Logf("Reconnect returned (Node Ready) in %v", time.Since(reconnectAt).Round(time.Millisecond))
	for name, was := range before {
		now := mainContainer(waitPod(t, c, name, "Ready again", isRunningReady))
		if now.ContainerID != was.ContainerID || now.RestartCount != 0 || now.State.Running == nil || !now.State.Running.StartedAt.Equal(&was.State.Running.StartedAt) {
			t.Errorf("the container of %s changed across the disconnection: before %+v, after %+v", name, was, now)
		}
	}
	t.Logf("%d pods Ready again %v after Reconnect began", len(before), time.Since(reconnectAt).Round(time.Millisecond))
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.cs.CoreV1().Pods(namespace).Get(ctx, "doomed", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("the pod deleted while the node was disconnected was not removed after Reconnect: %v", err)
	}
	outage := int(time.Since(disconnected) / time.Second)
	if logs := kubeletLogs(t, c, "steady", "main"); strings.Count(logs, "tick ") < outage*9/10 {
		t.Errorf("the log has %d ticks, want at least %d (one a second through the %d s outage)", strings.Count(logs, "tick "), outage*9/10, outage)
	}
	var out strings.Builder
	cfg := &rest.Config{Host: "https://" + c.kubelet.String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	if err := kubeletExec(t, cfg, "steady", []string{"echo", "still-here"}, &out, &out); err != nil || out.String() != "still-here\n" {
		t.Errorf("exec after Reconnect: %v, output %q", err, out.String())
	}
}
