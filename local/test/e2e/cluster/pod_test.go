package cluster_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// plainPod has two small HTTP servers: web, whose liveness probe passes,
// and flaky, whose probe asks for a path it does not serve (404) and so
// always fails.
const plainPod = `
apiVersion: v1
kind: Pod
metadata:
  name: plain
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: web
      image: rayproject/ray:2.52.0
      command: ["python", "-u", "-m", "http.server", "8080"]
      ports: [{containerPort: 8080}]
      resources: {requests: {cpu: 50m, memory: 128Mi}}
      livenessProbe:
        httpGet: {path: /, port: 8080}
        initialDelaySeconds: 3
        periodSeconds: 1
    - name: flaky
      image: rayproject/ray:2.52.0
      command: ["python", "-u", "-m", "http.server", "8081"]
      resources: {requests: {cpu: 50m, memory: 128Mi}}
      livenessProbe:
        httpGet: {path: /healthz, port: 8081}
        initialDelaySeconds: 1
        periodSeconds: 1
        failureThreshold: 1
`

// plainPodTimeout bounds the pod's start and two liveness restarts (the
// second after the kubelet's 10 s back-off).
const plainPodTimeout = 2 * time.Minute

// TestPlainPod: what a user sees of a plain Pod on the local node. The
// container whose liveness probe fails is restarted again and again while
// its sibling keeps running; kubectl port-forward reaches the sibling's
// server, kubectl logs shows that request (and the failed probes in the
// restarted container's previous log), and kubectl exec runs a command in
// the container with its standard input.
func TestPlainPod(t *testing.T) {
	began := time.Now()
	ns := shared.namespace(t)
	shared.applyManifest(t, ns, "plainPod", []byte(plainPod))
	ctx, cancel := context.WithTimeout(t.Context(), plainPodTimeout)
	defer cancel()

	pod := shared.waitRestarts(ctx, t, ns, "plain", "flaky", 2)
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.Name == "web" && cs.RestartCount != 0:
			t.Errorf("web, whose probe passes, was restarted %d times: last state %+v", cs.RestartCount, cs.LastTerminationState)
		case cs.Name == "flaky" && cs.LastTerminationState.Terminated == nil:
			t.Errorf("flaky was restarted but has no terminated last state: %+v", cs)
		}
	}
	t.Logf("flaky restarted twice after %v", time.Since(began).Round(time.Second))

	body := shared.portForwardGET(ctx, t, ns, "plain", 8080)
	if !strings.Contains(body, "Directory listing") {
		t.Errorf("GET / through kubectl port-forward answered:\n%s", body)
	}
	logs, err := shared.kubectl(ctx, "logs", "-n", ns, "plain", "-c", "web")
	if err != nil || !strings.Contains(logs, "Serving HTTP on") || !strings.Contains(logs, `"GET / HTTP/1.1" 200`) {
		t.Errorf("kubectl logs of web lacks the server's banner or the forwarded request: %v\n%s", err, logs)
	}
	previous, err := shared.kubectl(ctx, "logs", "-n", ns, "plain", "-c", "flaky", "--previous")
	if err != nil || !strings.Contains(previous, `"GET /healthz HTTP/1.1" 404`) {
		t.Errorf("kubectl logs --previous of flaky lacks the failed probe: %v\n%s", err, previous)
	}
	cmd, err := shared.kubectlCmd(ctx, "exec", "-i", "-n", ns, "plain", "-c", "web", "--",
		"python", "-c", "import socket, sys; print(socket.gethostname(), sys.stdin.read().upper())")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = strings.NewReader("hello from stdin")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "plain HELLO FROM STDIN" {
		t.Errorf("kubectl exec -i answered %q (%v), want %q", out, err, "plain HELLO FROM STDIN")
	}
	t.Logf("done in %v", time.Since(began).Round(time.Second))
}

// waitRestarts waits until a container of the Pod has been restarted at
// least n times, and returns the Pod.
func (s *suite) waitRestarts(ctx context.Context, t *testing.T, ns, name, container string, n int32) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	err := poll(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pod); err != nil {
			return false, err
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == container {
				return cs.RestartCount >= n, fmt.Errorf("%d restarts, state %+v", cs.RestartCount, cs.State)
			}
		}
		return false, fmt.Errorf("pod %s, no status of %s yet", pod.Status.Phase, container)
	})
	if err != nil {
		t.Fatalf("container %s of %s was not restarted %d times: %v", container, name, n, err)
	}
	return pod
}

// forwarding is kubectl port-forward's line naming the local port.
var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) ->`)

// portForwardGET runs kubectl port-forward to the Pod's port on a free
// local port, GETs / through it and returns the body.
func (s *suite) portForwardGET(ctx context.Context, t *testing.T, ns, pod string, port int) string {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd, err := s.kubectlCmd(ctx, "port-forward", "-n", ns, "pod/"+pod, fmt.Sprintf(":%d", port))
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	var local string
	for local == "" && lines.Scan() {
		if m := forwarding.FindStringSubmatch(lines.Text()); m != nil {
			local = m[1]
		}
	}
	if local == "" {
		t.Fatalf("kubectl port-forward named no local port: %s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+local+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET through kubectl port-forward: %v (%s)", err, stderr.String())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET through kubectl port-forward: %s, %v", resp.Status, err)
	}
	return string(body)
}
