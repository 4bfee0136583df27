package controlplane

import (
	"crypto/x509"
	"net/netip"
	neturl "net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	certutil "k8s.io/client-go/util/cert"
)

// testNetwork is a valid node network.
func testNetwork() *NodeNetwork {
	return &NodeNetwork{
		NodeIP:   netip.MustParseAddr("10.244.0.1"),
		PodCIDR:  netip.MustParsePrefix("10.244.0.0/24"),
		NodeName: "local",
	}
}

func TestNodeNetworkComplete(t *testing.T) {
	tests := map[string]struct {
		change  func(n *NodeNetwork)
		wantErr string
	}{
		"valid":                         {change: func(*NodeNetwork) {}},
		"no node IP":                    {change: func(n *NodeNetwork) { n.NodeIP = netip.Addr{} }, wantErr: "not an IPv4 address"},
		"IPv6 node IP":                  {change: func(n *NodeNetwork) { n.NodeIP = netip.MustParseAddr("fd00::1") }, wantErr: "not an IPv4 address"},
		"node IP outside the pod range": {change: func(n *NodeNetwork) { n.NodeIP = netip.MustParseAddr("10.245.0.1") }, wantErr: "does not contain NodeIP"},
		"no pod range":                  {change: func(n *NodeNetwork) { n.PodCIDR = netip.Prefix{} }, wantErr: "does not contain NodeIP"},
		"no node name":                  {change: func(n *NodeNetwork) { n.NodeName = "" }, wantErr: "NodeName is required"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := testNetwork()
			tc.change(n)
			err := n.complete()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("complete() = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestNodeNetworkCompleteDefaults(t *testing.T) {
	n := testNetwork()
	n.PodCIDR = netip.MustParsePrefix("10.244.0.1/24")
	if err := n.complete(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("10.244.0.0/24", n.PodCIDR.String()); diff != "" {
		t.Errorf("PodCIDR (-want +got):\n%s", diff)
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

func TestAPIServerArgsWithNetworkBindTheBridgeOnly(t *testing.T) {
	creds := &credentials{
		kubeletClient: &clientCert{certFile: "/pki/kc.crt", keyFile: "/pki/kc.key"},
		frontProxy:    &clientCert{caFile: "/pki/fp-ca.crt", certFile: "/pki/fp.crt", keyFile: "/pki/fp.key"},
	}
	want := []string{
		"--bind-address=10.244.0.1",
		"--advertise-address=10.244.0.1",
		"--kubelet-client-certificate=/pki/kc.crt",
		"--kubelet-client-key=/pki/kc.key",
		"--kubelet-preferred-address-types=InternalIP",
		"--requestheader-client-ca-file=/pki/fp-ca.crt",
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=/pki/fp.crt",
		"--proxy-client-key-file=/pki/fp.key",
		"--enable-aggregator-routing=true",
	}
	if diff := cmp.Diff(want, testNetwork().apiServerArgs(creds)); diff != "" {
		t.Errorf("apiServerArgs (-want +got):\n%s", diff)
	}
}

// TestAPIServerListensWhereClientsGo: kube-apiserver refuses anonymous
// requests, binds one address, and the URL every client is given (the
// kubeconfig's, the service account issuer) names that address, which the
// serving certificate covers.
func TestAPIServerListensWhereClientsGo(t *testing.T) {
	for name, n := range map[string]*NodeNetwork{"without a network": nil, "with a network": testNetwork()} {
		t.Run(name, func(t *testing.T) {
			creds, err := (&ControlPlane{}).writeCredentials(t.TempDir(), n)
			if err != nil {
				t.Fatal(err)
			}
			args, err := apiServerFlags(&Options{StateDir: t.TempDir(), Network: n}, creds, "http://127.0.0.1:2379", 6443)
			if err != nil {
				t.Fatal(err)
			}
			flags := flagValues(args)
			if got := flags["anonymous-auth"]; len(got) != 1 || got[0] != "false" {
				t.Errorf("--anonymous-auth = %v, want false", got)
			}
			url, err := neturl.Parse(n.apiServerURL(6443))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{url.Hostname()}, flags["bind-address"]); diff != "" {
				t.Errorf("--bind-address, against the clients' URL %s (-want +got):\n%s", url, diff)
			}
			if diff := cmp.Diff([]string{url.String()}, flags["service-account-issuer"]); diff != "" {
				t.Errorf("--service-account-issuer (-want +got):\n%s", diff)
			}
			serving := readCert(t, creds.servingCert)
			if _, err := serving.Verify(x509.VerifyOptions{DNSName: url.Hostname(), Roots: certPool(t, creds.servingCAData)}); err != nil {
				t.Errorf("serving certificate for %s: %v", url.Hostname(), err)
			}
		})
	}
}

// flagValues maps each --name=value flag to its values.
func flagValues(args []string) map[string][]string {
	flags := map[string][]string{}
	for _, arg := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		flags[name] = append(flags[name], value)
	}
	return flags
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
	caPEM, err = os.ReadFile(creds.frontProxy.caFile)
	if err != nil {
		t.Fatal(err)
	}
	proxy := readCert(t, creds.frontProxy.certFile)
	if _, err := proxy.Verify(x509.VerifyOptions{Roots: certPool(t, caPEM), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("front-proxy client certificate against its CA file: %v", err)
	}
	if got := proxy.Subject.CommonName; got != frontProxyClientUser {
		t.Errorf("front-proxy client certificate CN = %q, want %q", got, frontProxyClientUser)
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
	if creds.kubeletClient != nil || creds.frontProxy != nil || creds.servingCAFile != "" {
		t.Errorf("node network credentials written without a network: %+v", creds)
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
