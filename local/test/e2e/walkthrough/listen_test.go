package walkthrough_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ray-operator/ray-operator/internal/testing/exposure"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/kubectl"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// Where ray-local's operator serves by default (`make run` passes none of
// these flags).
var (
	operatorMetrics = netip.MustParseAddrPort("127.0.0.1:8080")
	operatorProbes  = netip.MustParseAddrPort("127.0.0.1:8082")
)

// TestRayLocalListensOnLoopbackAndBridgeOnly runs ray-local as `make run`
// does, with --webhooks, and looks from the host while it runs: every TCP
// socket that ray-local or a process it started listens on is bound to
// loopback or the bridge address; the API server (at the kubeconfig's
// address) answers an anonymous request with 401; the state directory's
// keys, tokens and kubeconfig are root's alone; and the API server still
// reaches the webhooks on 127.0.0.1.
func TestRayLocalListensOnLoopbackAndBridgeOnly(t *testing.T) {
	requireRealPods(t)
	stateDir := t.TempDir()
	// Another port than the default 9443 keeps clear of webhook servers of
	// other suites; the address is ray-local's default.
	webhooks := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(testenv.FreePorts(t, 1)[0])) //nolint:gosec // a port number
	run := startRayLocal(t, installcheck.ModuleRoot(t), stateDir, "--webhooks", "--webhook-port="+strconv.Itoa(int(webhooks.Port())))
	waitOperatorReady(t)
	bridge := bridgeAddr(t)
	api := apiServerAddr(t, run.kubeconfig)
	if api.Addr() != bridge {
		t.Errorf("the kubeconfig names the API server at %v, want the bridge address %v", api, bridge)
	}
	checkListeners(t, run, bridge, map[string]netip.AddrPort{
		"kube-apiserver":         api,
		"CoreDNS":                netip.AddrPortFrom(bridge, 53),
		"the kubelet API":        kubeletAddr(t, run, bridge),
		"metrics-server":         metricsServerAddr(t, run, bridge),
		"the operator's metrics": operatorMetrics,
		"the operator's probes":  operatorProbes,
		"the webhooks":           webhooks,
	})
	apiURL := "https://" + api.String() + "/version"
	if status, err := exposure.AnonymousStatus(t.Context(), apiURL); status != http.StatusUnauthorized {
		t.Errorf("anonymous GET %s: status %d (%v), want %d", apiURL, status, err, http.StatusUnauthorized)
	}
	checkSecretsPrivate(t, stateDir)
	checkWebhookAnswers(t, run)
	run.interrupt(t)
}

// tooLongName is a RayCluster name the validating webhook refuses (more
// than 53 characters) and the CRD's schema accepts.
const tooLongName = "a-ray-cluster-name-that-is-longer-than-fifty-three-chars"

// checkWebhookAnswers creates, as a server-side dry run, a RayCluster that
// only the webhook refuses: the API server must reach the webhook server,
// which listens on 127.0.0.1 only, at the https://localhost:<port> its
// configuration names.
func checkWebhookAnswers(t *testing.T, run *rayLocal) {
	t.Helper()
	manifest := filepath.Join(t.TempDir(), "raycluster.yaml")
	err := os.WriteFile(manifest, []byte(`apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: `+tooLongName+`
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray:2.52.0}]
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	out, err := kubectl.Run(t.Context(), run.kubeconfig, "create", "--dry-run=server", "-f", manifest)
	if want := "RayCluster name should be no more than 53 characters"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("kubectl create of a RayCluster named %q: %v (%s), want the webhook's %q", tooLongName, err, out, want)
	}
}

// checkListeners fails unless every TCP socket that ray-local or a process
// it started listens on is bound to loopback or bridge, and each of want
// is among them.
func checkListeners(t *testing.T, run *rayLocal, bridge netip.Addr, want map[string]netip.AddrPort) {
	t.Helper()
	tree, err := exposure.ProcessTree(run.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	listeners, err := exposure.HeldBy(tree)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ray-local's listeners (%d processes):\n%s", len(tree), listenerLines(listeners))
	if beyond := exposure.Beyond(listeners, bridge); len(beyond) > 0 {
		t.Errorf("listening beyond loopback and the bridge address %v:\n%s", bridge, listenerLines(beyond))
	}
	for what, addr := range want {
		if !slices.ContainsFunc(listeners, func(l exposure.Listener) bool { return l.Addr == addr }) {
			t.Errorf("%s does not listen on %v", what, addr)
		}
	}
}

// kubeletAddr is where the node says its kubelet API listens: its port on
// the bridge address (the node's InternalIP).
func kubeletAddr(t *testing.T, run *rayLocal, bridge netip.Addr) netip.AddrPort {
	t.Helper()
	out := kubectlIn(t, run.kubeconfig)("get", "nodes", "-o", "jsonpath={.items[0].status.daemonEndpoints.kubeletEndpoint.Port}")
	port, err := strconv.ParseUint(out, 10, 16)
	if err != nil {
		t.Fatalf("kubelet port %q: %v", out, err)
	}
	return netip.AddrPortFrom(bridge, uint16(port))
}

// metricsServerAddr is where the metrics-server Service's EndpointSlice
// sends the aggregation layer's requests.
func metricsServerAddr(t *testing.T, run *rayLocal, bridge netip.Addr) netip.AddrPort {
	t.Helper()
	out := kubectlIn(t, run.kubeconfig)("get", "endpointslices", "-n", "kube-system", "metrics-server-node", "-o", "jsonpath={.ports[0].port}")
	port, err := strconv.ParseUint(out, 10, 16)
	if err != nil {
		t.Fatalf("metrics-server port %q: %v", out, err)
	}
	return netip.AddrPortFrom(bridge, uint16(port))
}

// waitOperatorReady waits until the operator's readiness probe, at
// ray-local's default address, answers 200: its servers listen then.
func waitOperatorReady(t *testing.T) {
	t.Helper()
	probe := "http://" + operatorProbes.String() + "/readyz"
	httpClient := &http.Client{Timeout: time.Second}
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, readyTimeout, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
		if err != nil {
			return false, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			last = err
			return false, nil
		}
		_ = resp.Body.Close()
		last = fmt.Errorf("status %s", resp.Status)
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("the operator's %s did not answer 200 within %v: %v", probe, readyTimeout, last)
	}
}

// bridgeAddr is the IPv4 address of the local cluster's bridge.
func bridgeAddr(t *testing.T) netip.Addr {
	t.Helper()
	iface, err := net.InterfaceByName(bridgeName)
	if err != nil {
		t.Fatalf("bridge %s: %v", bridgeName, err)
	}
	addrs, err := iface.Addrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if prefix, err := netip.ParsePrefix(a.String()); err == nil && prefix.Addr().Is4() {
			return prefix.Addr()
		}
	}
	t.Fatalf("bridge %s has no IPv4 address: %v", bridgeName, addrs)
	return netip.Addr{}
}

// apiServerAddr is the address of the API server in the kubeconfig.
func apiServerAddr(t *testing.T, kubeconfig string) netip.AddrPort {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	u, err := url.Parse(cluster.Server)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := netip.ParseAddrPort(u.Host)
	if err != nil {
		t.Fatalf("the kubeconfig's server %s is not an address and port: %v", cluster.Server, err)
	}
	return addr
}

// checkSecretsPrivate fails unless every key, token and kubeconfig in
// stateDir is 0600 and their directories 0700.
func checkSecretsPrivate(t *testing.T, stateDir string) {
	t.Helper()
	loose, secrets, err := exposure.LooseFiles(stateDir, exposure.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if len(loose) > 0 || secrets < 10 { // the control plane's 9 and the webhook key
		t.Errorf("of %d secret files (want at least 10), readable by others than root: %v", secrets, loose)
	}
}

// listenerLines is one listener a line.
func listenerLines(ls []exposure.Listener) string {
	var s string
	for _, l := range ls {
		s += "  " + l.String() + "\n"
	}
	return s
}
