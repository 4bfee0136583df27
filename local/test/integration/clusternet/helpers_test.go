package clusternet_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// createService creates a Service without a selector: the test writes its
// EndpointSlices.
func (c *cluster) createService(t *testing.T, name string, spec corev1.ServiceSpec) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns}, Spec: spec}
	created, err := c.client.CoreV1().Services(c.ns).Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// createSlice creates EndpointSlice name of Service service with the
// endpoints on TCP port.
func (c *cluster) createSlice(t *testing.T, service, name string, port int32, endpoints ...discoveryv1.Endpoint) {
	t.Helper()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: c.ns,
			Labels:    map[string]string{discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: "clusternet-test"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   endpoints,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(port)}},
	}
	if _, err := c.client.DiscoveryV1().EndpointSlices(c.ns).Create(t.Context(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// serveHTTP answers body on port inside the pod until the test ends.
func serveHTTP(t *testing.T, p *pod, port int, body string) {
	t.Helper()
	var ln net.Listener
	err := p.in(func() error {
		var err error
		ln, err = net.Listen("tcp", ":"+strconv.Itoa(port))
		return err
	})
	if err != nil {
		t.Fatalf("listening in %s: %v", p.name, err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, body) }),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// httpClient is an HTTP client whose connections start in the pod.
func (p *pod) httpClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{DialContext: p.dialIn, TLSClientConfig: tlsConfig, DisableKeepAlives: true},
	}
}

// resolver is a DNS resolver in the pod that asks server (host:port).
func (p *pod) resolver(server string) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return p.dialIn(ctx, network, server)
		},
	}
}

// get GETs url, with a bearer token when one is given.
func get(ctx context.Context, c *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// parseCertPool makes a pool of the PEM certificates in data.
func parseCertPool(data []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("no PEM certificate")
	}
	return pool, nil
}

// nftTables lists the host's nftables tables ("ip kube-proxy", ...).
func nftTables() ([]string, error) {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return nil, fmt.Errorf("nft list tables: %w", err)
	}
	var tables []string
	for line := range strings.Lines(string(out)) {
		if table, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			tables = append(tables, table)
		}
	}
	return tables, nil
}

// processesMentioning lists the command lines of the processes whose
// command line contains s.
func processesMentioning(s string) []string {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, path := range cmdlines {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		if cmdline := strings.ReplaceAll(string(data), "\x00", " "); strings.Contains(cmdline, s) {
			found = append(found, cmdline)
		}
	}
	return found
}

// checkPortFree fails unless nothing listens on addr:port, UDP or TCP.
func checkPortFree(t *testing.T, addr netip.Addr, port uint16) {
	t.Helper()
	ap := netip.AddrPortFrom(addr, port).String()
	if pc, err := net.ListenPacket("udp", ap); err != nil {
		t.Errorf("UDP %s still taken: %v", ap, err)
	} else {
		_ = pc.Close()
	}
	if ln, err := net.Listen("tcp", ap); err != nil {
		t.Errorf("TCP %s still taken: %v", ap, err)
	} else {
		_ = ln.Close()
	}
}

// logTails logs the end of the named components' logs.
func logTails(t *testing.T, stateDir string, components ...string) {
	for _, name := range components {
		data, err := os.ReadFile(filepath.Join(stateDir, name+".log"))
		if err != nil {
			t.Logf("%s log: %v", name, err)
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		t.Logf("last lines of %s.log:\n%s", name, strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
}
