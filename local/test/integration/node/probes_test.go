package node_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// failingServer answers every request 500 with a body the pod keeps to
// itself, on 0.0.0.0:8080.
const failingServer = `exec python3 -c '
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(500); self.end_headers(); self.wfile.write(b"pod-private-detail")
http.server.HTTPServer(("0.0.0.0", 8080), H).serve_forever()'`

// testProbesFromThePod: probes run from the pod's network namespace. A
// readiness probe whose host is 127.0.0.1 reaches the pod's loopback, not
// the host's, where a listener counts what arrives; a failing answer's
// body stays out of the Unhealthy event, whose message is the kubelet's.
func testProbesFromThePod(t *testing.T, c *cluster) {
	var hits atomic.Int32
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) })}
	go func() { _ = srv.Serve(lis) }()
	defer func() { _ = srv.Close() }()
	hostPort := lis.Addr().(*net.TCPAddr).Port

	loopback := sleepPod("probe-loopback", "exec sleep 1000")
	loopback.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt(hostPort), Path: "/"}},
		PeriodSeconds: 1,
	}
	failing := sleepPod("probe-failing", failingServer)
	failing.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt(8080), Path: "/"}},
		PeriodSeconds: 1,
	}
	running := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }
	createAndWait(t, c, loopback, "Running", running)
	createAndWait(t, c, failing, "Running", running)
	defer deleteAndWait(t, c, "probe-loopback", "probe-failing")

	refused := waitEventWhere(t, c, "probe-loopback", "Unhealthy", func(m string) bool {
		return strings.HasPrefix(m, "Readiness probe failed: ") && strings.Contains(m, "connection refused")
	})
	if refused == "" {
		t.Errorf("the probe did not fail; the host's loopback listener got %d probe requests", hits.Load())
		return
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the host's loopback listener got %d probe requests; want none (the probe failed with %q)", n, refused)
	}
	if p, err := c.cs.CoreV1().Pods(namespace).Get(t.Context(), "probe-loopback", metav1.GetOptions{}); err != nil || readyCondition(p).Status == corev1.ConditionTrue {
		t.Errorf("probe-loopback is Ready (%v): its probe reached something", err)
	}
	waitEvent(t, c, "probe-failing", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500")
}

// waitEventWhere waits for a Warning event on pod with reason whose
// message satisfies ok, and returns the message; it fails t when none
// comes.
func waitEventWhere(t *testing.T, c *cluster, pod, reason string, ok func(string) bool) string {
	t.Helper()
	var seen []string
	var found string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		evs, err := c.cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for _, ev := range evs.Items {
			seen = append(seen, ev.Type+" "+ev.Reason+" "+ev.Message)
			if ev.Type == corev1.EventTypeWarning && ev.Reason == reason && ok(ev.Message) {
				found = ev.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("pod %s: no matching Warning %s event; events: %q", pod, reason, seen)
	}
	return found
}
