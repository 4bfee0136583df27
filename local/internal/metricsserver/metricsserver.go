package metricsserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// EnvBinary names the metrics-server executable.
const EnvBinary = "RAY_OPERATOR_METRICS_SERVER"

// Version is the metrics-server release the Makefile installs
// (METRICS_SERVER_VERSION); a test keeps the two in step.
const Version = "v0.9.0"

// Binary returns the metrics-server executable: $RAY_OPERATOR_METRICS_SERVER,
// else the one the Makefile installs into $CACHE/tools/metrics-server-<Version>.
func Binary() (string, error) {
	return controlplane.ToolBinary(EnvBinary, "metrics-server-"+Version, "run `make tools` or set "+EnvBinary)
}

// Resolution is how often metrics-server scrapes the node. A pod's CPU
// figure needs two scrapes, so it appears one to two resolutions after the
// pod starts; 10 s is the shortest metrics-server accepts.
const Resolution = 10 * time.Second

// MetricsServer is the addon. Prepare picks its port and serving
// certificate; Start runs it.
type MetricsServer struct {
	// Binary is the metrics-server executable (Binary()).
	Binary string

	port    int
	certDir string
	caPEM   []byte // what the API server and the readiness probe trust
}

var _ controlplane.Addon = (*MetricsServer)(nil)

// Name implements controlplane.Addon.
func (*MetricsServer) Name() string { return "metrics-server" }

// Prepare implements controlplane.Addon: it picks a port, writes the
// serving certificate for the Service's name and the node's address, and
// creates the Service, its EndpointSlice and the APIService.
func (m *MetricsServer) Prepare(ctx context.Context, host *controlplane.Host) error {
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		return err
	}
	m.port, m.certDir = ports[0], filepath.Join(host.StateDir(), "metrics-server")
	if m.caPEM, err = writeServingCert(m.certDir, host.Network()); err != nil {
		return err
	}
	return registerAPI(ctx, host, m.port, m.caPEM)
}

// Start implements controlplane.Addon: it runs metrics-server and waits
// until it answers /livez. It is not ready (/readyz) before its first
// scrape of the node, which starts after the control plane.
func (m *MetricsServer) Start(ctx context.Context, host *controlplane.Host) error {
	certFile, keyFile := host.KubeletClientCert()
	if err := host.Run(m.Name(), m.Binary, m.args(host, certFile, keyFile)); err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(m.caPEM)
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: serviceHost},
	}}
	url := "https://" + net.JoinHostPort(host.Network().NodeIP.String(), strconv.Itoa(m.port)) + "/livez"
	return host.WaitFor(ctx, "metrics-server "+url, func(ctx context.Context) error {
		return controlplane.Probe(ctx, client, url)
	})
}

// args are metrics-server's flags: it serves on the node's address with
// the certificate of writeServingCert, talks to the API server with the
// admin kubeconfig, and scrapes the node's kubelet API at its InternalIP
// and status port with the API server's kubelet client certificate. The
// kubelet's serving certificate is self-signed, hence insecure TLS towards
// it.
func (m *MetricsServer) args(host *controlplane.Host, certFile, keyFile string) []string {
	kubeconfig := host.KubeconfigPath()
	return []string{
		"--bind-address=" + host.Network().NodeIP.String(),
		"--secure-port=" + strconv.Itoa(m.port),
		"--tls-cert-file=" + filepath.Join(m.certDir, "tls.crt"),
		"--tls-private-key-file=" + filepath.Join(m.certDir, "tls.key"),
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-use-node-status-port",
		"--kubelet-client-certificate=" + certFile,
		"--kubelet-client-key=" + keyFile,
		"--kubelet-insecure-tls",
		"--metric-resolution=" + Resolution.String(),
		// Shorter than the resolution, as metrics-server requires.
		"--kubelet-request-timeout=" + (Resolution / 2).String(),
	}
}

// writeServingCert writes a self-signed serving certificate for the
// Service's DNS name (which the aggregation layer verifies) and the node's
// address into dir, and returns its PEM bundle (certificate and CA).
func writeServingCert(dir string, n *controlplane.NodeNetwork) ([]byte, error) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(serviceHost, []net.IP{n.NodeIP.AsSlice()}, nil)
	if err != nil {
		return nil, fmt.Errorf("generating the metrics-server serving certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("writing the metrics-server serving certificate: %w", err)
		}
	}
	return certPEM, nil
}
