package kubeletapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// TestResourceEndpointsNeedClientCertificate serves the API as the node
// does and asks for /metrics/resource and /stats/summary with and without
// a client certificate signed by the client CA.
func TestResourceEndpointsNeedClientCertificate(t *testing.T) {
	caPEM, clientCert := clientCA(t)
	ip := netip.MustParseAddr("127.0.0.1")
	tlsConfig, err := ServingTLS(ip, caPEM)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{NodeName: "n1", Usage: fakeUsage{node: sandbox.MachineUsage{BootTime: started}, pods: twoContainerPod()}, Clock: clocktesting.NewFakeClock(readAt)}
	addr := freeAddr(t)
	stop, err := s.Serve(t.Context(), addr, tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for path, want := range map[string]string{"/metrics/resource": `pod_cpu_usage_seconds_total{namespace="ns",pod="p"}`, "/stats/summary": `"podRef":{"name":"p"`} {
		if _, err := get(t, addr, path, nil); err == nil {
			t.Errorf("GET %s without a client certificate succeeded", path)
		}
		body, err := get(t, addr, path, &clientCert)
		if err != nil || !strings.Contains(body, want) {
			t.Errorf("GET %s with a client certificate: %v\n%s", path, err, body)
		}
	}
}

// get fetches path over TLS (the serving certificate is not verified).
func get(t *testing.T, addr, path string, cert *tls.Certificate) (string, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // the test checks client authentication only
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	resp, err := client.Get("https://" + addr + path)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var b strings.Builder
	_, err = io.Copy(&b, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return b.String(), fmt.Errorf("status %d", resp.StatusCode)
	}
	return b.String(), err
}

// freeAddr is a free TCP address on 127.0.0.1.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// clientCA makes a CA (PEM) and a client certificate it signed.
func clientCA(t *testing.T) ([]byte, tls.Certificate) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "test-client-ca"}, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "metrics-server"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw})
	return caPEM, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
