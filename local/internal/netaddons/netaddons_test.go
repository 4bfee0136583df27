package netaddons

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// testNetwork is a valid node network.
func testNetwork() *controlplane.NodeNetwork {
	return &controlplane.NodeNetwork{
		NodeIP:   netip.MustParseAddr("10.244.0.1"),
		PodCIDR:  netip.MustParsePrefix("10.244.0.0/24"),
		NodeName: "local",
	}
}

func TestKubeProxyConfig(t *testing.T) {
	data, err := kubeProxyConfig(testNetwork(), "/state/kubeconfig", 1001, 1002)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	// Zero conntrack settings must be written, not left out: left out,
	// kube-proxy defaults them and writes sysctls.
	want := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"mode":               "nftables",
		"hostnameOverride":   "local",
		"bindAddress":        "10.244.0.1",
		"clusterCIDR":        "10.244.0.0/24",
		"detectLocalMode":    "ClusterCIDR",
		"healthzBindAddress": "127.0.0.1:1001",
		"metricsBindAddress": "127.0.0.1:1002",
		"kubeconfig":         "/state/kubeconfig",
		"conntrack":          map[string]any{"maxPerCore": 0.0, "min": 0.0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
	}
	picked := map[string]any{"kubeconfig": got["clientConnection"].(map[string]any)["kubeconfig"]}
	for key := range want {
		if v, ok := got[key]; ok {
			picked[key] = v
		}
	}
	conntrack := got["conntrack"].(map[string]any)
	picked["conntrack"] = map[string]any{}
	for _, key := range []string{"maxPerCore", "min", "tcpEstablishedTimeout", "tcpCloseWaitTimeout"} {
		picked["conntrack"].(map[string]any)[key] = conntrack[key]
	}
	if diff := cmp.Diff(want, picked); diff != "" {
		t.Errorf("kube-proxy configuration (-want +got):\n%s", diff)
	}
}

func TestCorefile(t *testing.T) {
	want := `.:53 {
	bind 10.244.0.1
	errors
	ready 127.0.0.1:1003
	kubernetes cluster.local in-addr.arpa ip6.arpa {
		kubeconfig /state/kubeconfig
		pods insecure
		fallthrough in-addr.arpa ip6.arpa
	}
	forward . /etc/resolv.conf
	cache 30 {
		disable denial cluster.local
	}
	loop
}
`
	if diff := cmp.Diff(want, string(corefile(testNetwork(), "/state/kubeconfig", 1003))); diff != "" {
		t.Errorf("Corefile (-want +got):\n%s", diff)
	}
}

func TestProbeMetric(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("# TYPE x gauge\n" + `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} 1.7e+09` + "\n"))
	}))
	defer srv.Close()
	if err := probeMetric(t.Context(), srv.Client(), srv.URL, kubeProxySyncedMetric); err == nil {
		t.Error("IPv4 sync reported while only IPv6 synced")
	}
	if err := probeMetric(t.Context(), srv.Client(), srv.URL, `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} `); err != nil {
		t.Errorf("IPv6 sync not found: %v", err)
	}
}

func TestNewNeedsTheHostLock(t *testing.T) {
	_, err := New()
	if err == nil || !strings.Contains(err.Error(), "machine-wide lock") {
		t.Fatalf("New() without the host lock = %v, want an error naming the machine-wide lock", err)
	}
}

func TestCoreDNSVersionMatchesMakefile(t *testing.T) {
	got, err := controlplane.MakefileVersion("COREDNS_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if got != CoreDNSVersion {
		t.Errorf("Makefile COREDNS_VERSION = %s, netaddons has %s", got, CoreDNSVersion)
	}
}
