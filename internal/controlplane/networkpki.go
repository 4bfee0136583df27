package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Identity of the client certificate kube-apiserver presents to kubelets
// (logs, exec, port-forward). system:masters lets a kubelet that asks the
// API server to authorize it allow everything.
const (
	kubeletClientUser  = "kube-apiserver-kubelet-client"
	kubeletClientGroup = "system:masters"
)

// frontProxyClientUser is the identity of the client certificate
// kube-apiserver presents to aggregated API servers (metrics-server), which
// trust the X-Remote-User headers of requests made with it.
const frontProxyClientUser = "front-proxy-client"

// writeCredentials writes the API server's credentials in dir and, with a
// node network, the serving CA alone (what pods trust), the kubelet client
// certificate, whose CA becomes cp.KubeletClientCA, and the front-proxy
// client certificate of the aggregation layer.
func (cp *ControlPlane) writeCredentials(dir string, n *NodeNetwork) (*credentials, error) {
	creds, err := writeCredentials(dir, n.servingNames())
	if err != nil {
		return nil, err
	}
	if creds.etcd, err = writeEtcdCredentials(dir); err != nil || n == nil {
		return creds, err
	}
	ca, err := caOnly(creds.servingCAData)
	if err != nil {
		return nil, err
	}
	creds.servingCAFile = filepath.Join(dir, "serving-ca.crt")
	if err := writeFiles(map[string][]byte{creds.servingCAFile: ca}); err != nil {
		return nil, err
	}
	kubeletSubject := pkix.Name{CommonName: kubeletClientUser, Organization: []string{kubeletClientGroup}}
	if creds.kubeletClient, err = writeClientCert(dir, "kubelet-client", kubeletSubject); err != nil {
		return nil, err
	}
	if creds.frontProxy, err = writeClientCert(dir, "front-proxy-client", pkix.Name{CommonName: frontProxyClientUser}); err != nil {
		return nil, err
	}
	cp.KubeletClientCA = creds.kubeletClient.caPEM
	return creds, nil
}

// clientCert is a client certificate of kube-apiserver and the CA that
// signed it, which the servers it calls verify it with.
type clientCert struct {
	caPEM    []byte
	caFile   string
	certFile string
	keyFile  string
}

// writeClientCert creates a CA of its own and a client certificate for
// subject signed by it, in dir as <name>-ca.crt, <name>.crt and <name>.key.
func writeClientCert(dir, name string, subject pkix.Name) (*clientCert, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the %s CA key: %w", name, err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "ray-operator-" + name + "-ca"}, caKey)
	if err != nil {
		return nil, fmt.Errorf("generating the %s CA: %w", name, err)
	}
	certDER, keyPEM, err := signClientCert(ca, caKey, subject)
	if err != nil {
		return nil, err
	}
	cc := &clientCert{
		caPEM:    pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw}),
		caFile:   filepath.Join(dir, name+"-ca.crt"),
		certFile: filepath.Join(dir, name+".crt"),
		keyFile:  filepath.Join(dir, name+".key"),
	}
	err = writeFiles(map[string][]byte{
		cc.caFile:   cc.caPEM,
		cc.certFile: pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: certDER}),
		cc.keyFile:  keyPEM,
	})
	if err != nil {
		return nil, err
	}
	return cc, nil
}

// signClientCert issues a client certificate for subject, valid as long as
// the CA, and returns it (DER) with its private key (PEM).
func signClientCert(ca *x509.Certificate, caKey *ecdsa.PrivateKey, subject pkix.Name) ([]byte, []byte, error) {
	return signCert(ca, caKey, certRequest{subject: subject, usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}

// certRequest is what a certificate signCert issues says.
type certRequest struct {
	subject pkix.Name
	usages  []x509.ExtKeyUsage
	ips     []net.IP // subject alternative names of a serving certificate
	dns     []string
}

// signCert issues the certificate req asks for, valid as long as the CA,
// and returns it (DER) with its private key (PEM).
func signCert(ca *x509.Certificate, caKey *ecdsa.PrivateKey, req certRequest) ([]byte, []byte, error) {
	subject := req.subject
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the key of %s: %w", subject.CommonName, err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return nil, nil, fmt.Errorf("generating a serial number: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     ca.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  req.usages,
		IPAddresses:  req.ips,
		DNSNames:     req.dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the certificate of %s: %w", subject.CommonName, err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the key of %s: %w", subject.CommonName, err)
	}
	return der, keyPEM, nil
}

// caOnly returns the CA certificates of a PEM bundle, such as the serving
// certificate followed by its CA, as PEM.
func caOnly(bundle []byte) ([]byte, error) {
	certs, err := certutil.ParseCertsPEM(bundle)
	if err != nil {
		return nil, fmt.Errorf("parsing the serving certificate bundle: %w", err)
	}
	var out []byte
	for _, c := range certs {
		if c.IsCA {
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: c.Raw})...)
		}
	}
	if out == nil {
		return nil, errors.New("the serving certificate bundle holds no CA")
	}
	return out, nil
}
