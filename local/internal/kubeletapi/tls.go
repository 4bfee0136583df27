package kubeletapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"k8s.io/client-go/util/cert"
)

// ServingTLS makes the kubelet API's TLS configuration: a self-signed
// certificate for ip; client certificates required and verified against
// clientCA when given.
func ServingTLS(ip netip.Addr, clientCA []byte) (*tls.Config, error) {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(ip.String(), []net.IP{ip.AsSlice()}, nil)
	if err != nil {
		return nil, fmt.Errorf("generating the kubelet serving certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if len(clientCA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(clientCA) {
			return nil, errors.New("ClientCA holds no PEM certificate")
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
