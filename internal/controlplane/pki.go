package controlplane

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// credentials are the files kube-apiserver needs and the admin token.
type credentials struct {
	servingCert   string // PEM bundle: serving certificate and its CA
	servingKey    string
	saKey         string // signs and verifies service account tokens
	tokenFile     string // static token authentication file
	adminToken    string
	servingCAData []byte // what clients trust

	// With a node network only:
	servingCAFile string         // the serving CA alone, for kube-root-ca.crt
	kubeletClient *kubeletClient // what kube-apiserver presents to kubelets
}

// adminUser is the identity of the admin token; system:masters bypasses RBAC.
const (
	adminUser  = "ray-operator-admin"
	adminGroup = "system:masters"
)

// servingNames are the addresses the API server's certificate covers
// besides 127.0.0.1 and localhost.
type servingNames struct {
	ips []net.IP
	dns []string
}

// writeCredentials creates a self-signed serving certificate for 127.0.0.1,
// localhost and extra, a service account signing key and an admin token in
// dir.
func writeCredentials(dir string, extra servingNames) (*credentials, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	ips := append([]net.IP{net.IPv4(127, 0, 0, 1)}, extra.ips...)
	dns := append([]string{"localhost"}, extra.dns...)
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", ips, dns)
	if err != nil {
		return nil, fmt.Errorf("generating the API server certificate: %w", err)
	}
	saKeyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, fmt.Errorf("generating the service account key: %w", err)
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	c := &credentials{
		servingCert:   filepath.Join(dir, "apiserver.crt"),
		servingKey:    filepath.Join(dir, "apiserver.key"),
		saKey:         filepath.Join(dir, "sa.key"),
		tokenFile:     filepath.Join(dir, "tokens.csv"),
		adminToken:    token,
		servingCAData: certPEM,
	}
	files := map[string][]byte{
		c.servingCert: certPEM,
		c.servingKey:  keyPEM,
		c.saKey:       saKeyPEM,
		c.tokenFile:   fmt.Appendf(nil, "%s,%s,%s,%q\n", token, adminUser, adminUser, adminGroup),
	}
	if err := writeFiles(files); err != nil {
		return nil, err
	}
	return c, nil
}

// writeFiles writes each file readable by its owner only.
func writeFiles(files map[string][]byte) error {
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// randomToken returns 32 random bytes, hex-encoded.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// FreePorts asks the kernel for n distinct unused TCP ports on 127.0.0.1.
// Another process may grab one before it is used; the window is short.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
