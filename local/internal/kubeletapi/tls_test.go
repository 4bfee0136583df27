package kubeletapi

import (
	"crypto/tls"
	"crypto/x509"
	"net/netip"
	"testing"

	"k8s.io/client-go/util/cert"
)

func TestServingTLS(t *testing.T) {
	ip := netip.MustParseAddr("10.244.0.1")
	caPEM, _, err := cert.GenerateSelfSignedCertKey("client-ca", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	withCA, err := ServingTLS(ip, caPEM)
	if err != nil {
		t.Fatal(err)
	}
	if withCA.ClientAuth != tls.RequireAndVerifyClientCert || withCA.ClientCAs == nil {
		t.Errorf("with ClientCA: ClientAuth %v", withCA.ClientAuth)
	}
	leaf, err := x509.ParseCertificate(withCA.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname(ip.String()); err != nil {
		t.Errorf("serving certificate does not cover the node IP: %v", err)
	}
	without, err := ServingTLS(ip, nil)
	if err != nil {
		t.Fatal(err)
	}
	if without.ClientAuth != tls.NoClientCert {
		t.Errorf("without ClientCA: ClientAuth %v", without.ClientAuth)
	}
	if _, err := ServingTLS(ip, []byte("not pem")); err == nil {
		t.Error("a ClientCA without certificates was accepted")
	}
}
