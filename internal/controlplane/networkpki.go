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

// writeCredentials writes the API server's credentials in dir and, with a
// node network, the serving CA alone (what pods trust) and the kubelet
// client certificate, whose CA becomes cp.KubeletClientCA.
func (cp *ControlPlane) writeCredentials(dir string, n *NodeNetwork) (*credentials, error) {
	creds, err := writeCredentials(dir, n.servingNames())
	if err != nil || n == nil {
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
	if creds.kubeletClient, err = writeKubeletClient(dir); err != nil {
		return nil, err
	}
	cp.KubeletClientCA = creds.kubeletClient.caPEM
	return creds, nil
}

// kubeletClient is the API server's kubelet client certificate and the CA
// kubelets verify it with.
type kubeletClient struct {
	caPEM    []byte
	certFile string
	keyFile  string
}

// writeKubeletClient creates a CA and a client certificate signed by it for
// kube-apiserver to present to kubelets, in dir.
func writeKubeletClient(dir string) (*kubeletClient, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the kubelet client CA key: %w", err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "ray-operator-kubelet-client-ca"}, caKey)
	if err != nil {
		return nil, fmt.Errorf("generating the kubelet client CA: %w", err)
	}
	certDER, keyPEM, err := signClientCert(ca, caKey)
	if err != nil {
		return nil, err
	}
	kc := &kubeletClient{
		caPEM:    pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw}),
		certFile: filepath.Join(dir, "kubelet-client.crt"),
		keyFile:  filepath.Join(dir, "kubelet-client.key"),
	}
	err = writeFiles(map[string][]byte{
		filepath.Join(dir, "kubelet-client-ca.crt"): kc.caPEM,
		kc.certFile: pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: certDER}),
		kc.keyFile:  keyPEM,
	})
	if err != nil {
		return nil, err
	}
	return kc, nil
}

// signClientCert issues the kubelet client certificate, valid as long as
// the CA, and returns it (DER) with its private key (PEM).
func signClientCert(ca *x509.Certificate, caKey *ecdsa.PrivateKey) ([]byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the kubelet client key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return nil, nil, fmt.Errorf("generating a serial number: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: kubeletClientUser, Organization: []string{kubeletClientGroup}},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     ca.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the kubelet client certificate: %w", err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the kubelet client key: %w", err)
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
