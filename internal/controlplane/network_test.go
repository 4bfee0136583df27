package controlplane

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/yaml"
)

// testNetwork is a valid node network.
func testNetwork() *NodeNetwork {
	return &NodeNetwork{
		NodeIP:        netip.MustParseAddr("10.244.0.1"),
		PodCIDR:       netip.MustParsePrefix("10.244.0.0/24"),
		NodeName:      "local",
		CoreDNSBinary: "/bin/true",
	}
}

// binDirWith makes a directory holding executables with the given names.
func binDirWith(t *testing.T, names ...string) string {
	dir := t.TempDir()
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestNodeNetworkComplete(t *testing.T) {
	withKubeProxy := binDirWith(t, binKubeProxy)
	tests := map[string]struct {
		change  func(n *NodeNetwork)
		binDir  string
		wantErr string
	}{
		"valid":                         {change: func(*NodeNetwork) {}, binDir: withKubeProxy},
		"no node IP":                    {change: func(n *NodeNetwork) { n.NodeIP = netip.Addr{} }, binDir: withKubeProxy, wantErr: "not an IPv4 address"},
		"IPv6 node IP":                  {change: func(n *NodeNetwork) { n.NodeIP = netip.MustParseAddr("fd00::1") }, binDir: withKubeProxy, wantErr: "not an IPv4 address"},
		"node IP outside the pod range": {change: func(n *NodeNetwork) { n.NodeIP = netip.MustParseAddr("10.245.0.1") }, binDir: withKubeProxy, wantErr: "does not contain NodeIP"},
		"no pod range":                  {change: func(n *NodeNetwork) { n.PodCIDR = netip.Prefix{} }, binDir: withKubeProxy, wantErr: "does not contain NodeIP"},
		"no node name":                  {change: func(n *NodeNetwork) { n.NodeName = "" }, binDir: withKubeProxy, wantErr: "NodeName is required"},
		"no kube-proxy":                 {change: func(*NodeNetwork) {}, binDir: t.TempDir(), wantErr: "make k8s-binaries"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := testNetwork()
			tc.change(n)
			err := n.complete(tc.binDir)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("complete() = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestNodeNetworkCompleteDefaults(t *testing.T) {
	coredns := filepath.Join(binDirWith(t, "coredns"), "coredns")
	t.Setenv(EnvCoreDNSBinary, coredns)
	n := testNetwork()
	n.PodCIDR = netip.MustParsePrefix("10.244.0.1/24")
	n.CoreDNSBinary = ""
	if err := n.complete(binDirWith(t, binKubeProxy)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("10.244.0.0/24", n.PodCIDR.String()); diff != "" {
		t.Errorf("PodCIDR (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(coredns, n.CoreDNSBinary); diff != "" {
		t.Errorf("CoreDNSBinary (-want +got):\n%s", diff)
	}
}

func TestAPIServerArgsWithoutNetworkAreLoopbackOnly(t *testing.T) {
	var n *NodeNetwork
	want := []string{"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1"}
	if diff := cmp.Diff(want, n.apiServerArgs(&credentials{})); diff != "" {
		t.Errorf("apiServerArgs (-want +got):\n%s", diff)
	}
	if got := n.controllerManagerArgs(&credentials{}); got != nil {
		t.Errorf("controllerManagerArgs = %v, want none", got)
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

func TestServingCertificateCoversPodNames(t *testing.T) {
	cp := &ControlPlane{}
	creds, err := cp.writeCredentials(t.TempDir(), testNetwork())
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(creds.servingCAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := certPool(t, caPEM)
	serving := readCert(t, creds.servingCert)
	for _, name := range []string{"127.0.0.1", "localhost", "10.244.0.1", "10.96.0.1", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	client := readCert(t, creds.kubeletClient.certFile)
	_, err = client.Verify(x509.VerifyOptions{Roots: certPool(t, cp.KubeletClientCA), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Errorf("kubelet client certificate against KubeletClientCA: %v", err)
	}
	if got, want := client.Subject.CommonName, kubeletClientUser; got != want {
		t.Errorf("kubelet client certificate CN = %q, want %q", got, want)
	}
}

func TestServingCertificateWithoutNetwork(t *testing.T) {
	var n *NodeNetwork
	creds, err := (&ControlPlane{}).writeCredentials(t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	serving := readCert(t, creds.servingCert)
	if diff := cmp.Diff([]string{"127.0.0.1", "127.0.0.1"}, ipStrings(serving)); diff != "" {
		t.Errorf("serving certificate IPs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"localhost"}, serving.DNSNames); diff != "" {
		t.Errorf("serving certificate DNS names (-want +got):\n%s", diff)
	}
	if creds.kubeletClient != nil || creds.servingCAFile != "" {
		t.Errorf("node network credentials written without a network: %+v", creds)
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

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return certs[0]
}

func certPool(t *testing.T, pemData []byte) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		t.Fatal("no certificate in PEM data")
	}
	return pool
}

func ipStrings(c *x509.Certificate) []string {
	var ips []string
	for _, ip := range c.IPAddresses {
		ips = append(ips, ip.String())
	}
	return ips
}

func TestStartWithANodeNetworkNeedsTheHostLock(t *testing.T) {
	_, err := Start(t.Context(), Options{StateDir: t.TempDir(), Network: &NodeNetwork{
		NodeIP: netip.MustParseAddr("10.244.0.1"), PodCIDR: netip.MustParsePrefix("10.244.0.0/24"), NodeName: "n",
	}})
	if err == nil || !strings.Contains(err.Error(), "machine-wide lock") {
		t.Fatalf("Start() without the host lock = %v, want an error naming the machine-wide lock", err)
	}
}
