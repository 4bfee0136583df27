package controlplane_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// testEtcdTakesOnlyItsClients: etcd serves TLS and takes only clients
// with a certificate of its own CA (kube-apiserver's, which the API server
// answering at all proves): a local user who reaches its port gets
// nothing over plain HTTP, with no certificate, or with a certificate of
// another CA.
func testEtcdTakesOnlyItsClients(t *testing.T, env *testenv.Env) {
	etcd := env.ControlPlane.EtcdURL
	if !strings.HasPrefix(etcd, "https://127.0.0.1:") {
		t.Fatalf("etcd's client URL is %q, want https on 127.0.0.1", etcd)
	}
	plain := "http://" + strings.TrimPrefix(etcd, "https://")
	if body, err := get(t, &http.Client{Timeout: 5 * time.Second}, plain+"/version"); err == nil && strings.Contains(body, "etcdserver") {
		t.Errorf("etcd answered plain HTTP: %s", body)
	}
	noCert := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the client's certificate is what is tested, not etcd's
	if body, err := get(t, tlsClient(noCert), etcd+"/version"); err == nil {
		t.Errorf("etcd answered a TLS client without a certificate: %s", body)
	}
	stranger := &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{selfSignedClient(t)}} //nolint:gosec // as above
	if body, err := get(t, tlsClient(stranger), etcd+"/version"); err == nil {
		t.Errorf("etcd answered a client certificate of another CA: %s", body)
	}
}

func tlsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// get returns the body of a 200 answer to GET url, else an error.
func get(t *testing.T, c *http.Client, url string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = &statusError{resp.Status}
	}
	return string(body), err
}

type statusError struct{ status string }

func (e *statusError) Error() string { return "answered " + e.status }

// selfSignedClient is a client certificate no CA of the cluster signed.
func selfSignedClient(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "kube-apiserver-etcd-client"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
