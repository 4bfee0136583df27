package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
	"github.com/ray-operator/ray-operator/local/internal/traefik"
)

// backendPort is where each backend Pod's server listens.
const backendPort = 8080

// server answers every GET with the Pod's $NAME.
const server = `
import http.server, os
name = os.environ["NAME"].encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(name)))
        self.end_headers()
        self.wfile.write(name)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("", 8080), H).serve_forever()
`

// readyTimeout bounds the backends' start and Traefik's programming of the
// Gateway and route.
const readyTimeout = 2 * time.Minute

// requests is how many requests each split is measured with.
const requests = 200

// TestWeightedHTTPRoute: a Gateway of the local cluster's class, made and
// routed as a RayService's incremental upgrade makes them
// (internal/incrementalupgrade's Gateway and HTTPRoute: one listener on
// port 80, the active backend then the pending one), is accepted and
// programmed with the node's address, its route accepted with its refs
// resolved; requests to the node's address split 80/20 between two
// Services' Pods as the weights say, and after the weights move to 0/100
// every request goes to the second. Every request must succeed.
func TestWeightedHTTPRoute(t *testing.T) {
	ctx, c := t.Context(), shared.Client
	ns := e2eutil.Namespace(t, c, nil)
	for _, name := range []string{"blue", "green"} {
		if err := createBackend(ctx, c, ns, name); err != nil {
			t.Fatal(err)
		}
	}
	// The objects' owner: only the names and namespace of a RayService.
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "split", Namespace: ns}}
	gw := incrementalupgrade.Gateway(rs, incrementalupgrade.Options{GatewayClassName: traefik.GatewayClassName})
	if err := c.Create(ctx, gw); err != nil {
		t.Fatal(err)
	}
	route := incrementalupgrade.HTTPRoute(rs, backends(80, 20))
	if err := c.Create(ctx, route); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	waitCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err := e2eutil.Poll(waitCtx, 200*time.Millisecond, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(gw), gw); err != nil {
			return false, err
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(route), route); err != nil {
			return false, err
		}
		if !incrementalupgrade.GatewayReady(gw) || !incrementalupgrade.RouteReady(route, gw) {
			return false, fmt.Errorf("gateway %v, route %v", gw.Status.Conditions, route.Status.Parents)
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("Gateway and HTTPRoute not ready: %v", err)
	}
	t.Logf("Gateway programmed and route accepted %v after creation", time.Since(began).Round(time.Millisecond))
	nodeIP := shared.Cluster.Network.Gateway().String()
	if len(gw.Status.Addresses) != 1 || gw.Status.Addresses[0].Value != nodeIP {
		t.Errorf("Gateway status addresses %v; want the node's address %s", gw.Status.Addresses, nodeIP)
	}
	url := "http://" + nodeIP + ":" + strconv.Itoa(int(incrementalupgrade.ListenerPort)) + "/"
	// The backends' Pods are Ready and the route programmed; Traefik may
	// still be loading the endpoints, so wait for both to answer once.
	if err := waitForAnswers(ctx, url, "blue", "green"); err != nil {
		t.Fatal(err)
	}
	counts := send(t, url, requests)
	t.Logf("weights 80/20: %v of %d requests", counts, requests)
	checkSplit(t, counts, map[string]int{"blue": 160, "green": 40})

	if err := c.Get(ctx, client.ObjectKeyFromObject(route), route); err != nil {
		t.Fatal(err)
	}
	route.Spec = incrementalupgrade.HTTPRoute(rs, backends(0, 100)).Spec
	if err := c.Update(ctx, route); err != nil {
		t.Fatal(err)
	}
	moved := time.Now()
	// Traefik applies the change within its provider's throttle: poll
	// until twenty answers in a row come from green.
	err = e2eutil.Poll(waitCtx, 100*time.Millisecond, func() (bool, error) {
		c := send(t, url, 20)
		return c["green"] == 20, fmt.Errorf("answers %v", c)
	})
	if err != nil {
		t.Fatalf("the weights 0/100 never took effect: %v", err)
	}
	t.Logf("weights 0/100 in effect %v after the update", time.Since(moved).Round(time.Millisecond))
	counts = send(t, url, requests)
	t.Logf("weights 0/100: %v of %d requests", counts, requests)
	checkSplit(t, counts, map[string]int{"green": requests})
}

// backends are the route's two weighted backends, as the operator orders
// them: the active one, then the pending one.
func backends(blue, green int32) []incrementalupgrade.Backend {
	return []incrementalupgrade.Backend{
		{Service: "blue", Port: backendPort, Weight: blue},
		{Service: "green", Port: backendPort, Weight: green},
	}
}

// createBackend creates a Pod answering its name and a Service selecting it.
func createBackend(ctx context.Context, c client.Client, ns, name string) error {
	labels := map[string]string{"app": name}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "web", Image: "rayproject/ray:2.52.0",
				Command: []string{"python", "-u", "-c", server},
				Env:     []corev1.EnvVar{{Name: "NAME", Value: name}},
				Ports:   []corev1.ContainerPort{{ContainerPort: backendPort}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt(backendPort)}},
					PeriodSeconds: 1,
				},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
				}},
			}},
		},
	}
	if err := c.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating Pod %s: %w", name, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: backendPort, TargetPort: intstr.FromInt(backendPort)}},
		},
	}
	if err := c.Create(ctx, svc); err != nil {
		return fmt.Errorf("creating Service %s: %w", name, err)
	}
	return nil
}

// waitForAnswers sends requests until each of names has answered.
func waitForAnswers(ctx context.Context, url string, names ...string) error {
	seen := map[string]bool{}
	waitCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return e2eutil.Poll(waitCtx, 100*time.Millisecond, func() (bool, error) {
		answer, err := get(url)
		if err != nil {
			return false, err
		}
		seen[answer] = true
		for _, n := range names {
			if !seen[n] {
				return false, fmt.Errorf("answers so far %v", seen)
			}
		}
		return true, nil
	})
}

// send sends n requests, each on a new connection, and counts the
// answers; a failed request fails the test.
func send(t *testing.T, url string, n int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for range n {
		answer, err := get(url)
		if err != nil {
			t.Errorf("request through the Gateway: %v", err)
			continue
		}
		counts[answer]++
	}
	return counts
}

var httpClient = &http.Client{
	Timeout:   e2eutil.RequestTimeout,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

func get(url string) (string, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	return string(body), nil
}

// splitTolerance is how far a backend's count may be from its share:
// Traefik's weighted round robin is deterministic, so the split of
// consecutive requests is off its weights by at most a few requests where
// the measured window starts and ends in its cycle.
const splitTolerance = 4

// checkSplit compares the counts with the shares wanted (every answer
// must be one of them).
func checkSplit(t *testing.T, counts, want map[string]int) {
	t.Helper()
	for name, n := range counts {
		if _, ok := want[name]; !ok {
			t.Errorf("%d answers from %q, which has no weight", n, name)
		}
	}
	for name, w := range want {
		if d := counts[name] - w; d > splitTolerance || d < -splitTolerance {
			t.Errorf("%s answered %d of %d requests; want %d±%d", name, counts[name], requests, w, splitTolerance)
		}
	}
}
