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
	etcd          *etcdCredentials

	// With a node network only:
	servingCAFile string      // the serving CA alone, for kube-root-ca.crt
	kubeletClient *clientCert // what kube-apiserver presents to kubelets
	frontProxy    *clientCert // what it presents to aggregated API servers
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
// dir, which only its owner may enter.
func writeCredentials(dir string, extra servingNames) (*credentials, error) {
	if err := privateDir(dir); err != nil {
		return nil, err
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

// writeFiles writes each file readable by its owner only (0600), also
// where an older file of that name was not: each is written to a new file
// and renamed into place.
func writeFiles(files map[string][]byte) error {
	for path, data := range files {
		if err := writePrivate(path, data); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// writePrivate writes data to a new file in path's directory, which
// os.CreateTemp makes 0600, and renames it to path.
func writePrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// privateDir creates dir, or makes an existing one, enterable by its owner
// only (0700).
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restricting %s to its owner: %w", dir, err)
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
