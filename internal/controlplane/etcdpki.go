package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
)

// etcdClientUser is the identity of kube-apiserver's etcd client
// certificate.
const etcdClientUser = "kube-apiserver-etcd-client"

// etcdCredentials are etcd's own CA, the certificate etcd serves its client
// and peer ports with, and kube-apiserver's client certificate: etcd takes
// clients that present a certificate of its CA only, as kubeadm sets it up,
// so that a local user who reaches its port does not own the cluster.
type etcdCredentials struct {
	caFile     string
	serverCert string // server and client use: etcd's peer port presents it too
	serverKey  string
	clientCert string // kube-apiserver's
	clientKey  string
}

// writeEtcdCredentials creates etcd's CA and its two certificates in dir
// (etcd-ca.crt, etcd-server.crt/key, etcd-client.crt/key).
func writeEtcdCredentials(dir string) (*etcdCredentials, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the etcd CA key: %w", err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "ray-operator-etcd-ca"}, caKey)
	if err != nil {
		return nil, fmt.Errorf("generating the etcd CA: %w", err)
	}
	server, serverKey, err := signCert(ca, caKey, certRequest{
		subject: pkix.Name{CommonName: "etcd"},
		usages:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		ips:     []net.IP{net.IPv4(127, 0, 0, 1)},
		dns:     []string{"localhost"},
	})
	if err != nil {
		return nil, err
	}
	client, clientKey, err := signClientCert(ca, caKey, pkix.Name{CommonName: etcdClientUser})
	if err != nil {
		return nil, err
	}
	c := &etcdCredentials{
		caFile:     filepath.Join(dir, "etcd-ca.crt"),
		serverCert: filepath.Join(dir, "etcd-server.crt"),
		serverKey:  filepath.Join(dir, "etcd-server.key"),
		clientCert: filepath.Join(dir, "etcd-client.crt"),
		clientKey:  filepath.Join(dir, "etcd-client.key"),
	}
	err = writeFiles(map[string][]byte{
		c.caFile:     pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw}),
		c.serverCert: pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: server}),
		c.serverKey:  serverKey,
		c.clientCert: pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: client}),
		c.clientKey:  clientKey,
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// etcdArgs are etcd's flags: client and peer URLs on 127.0.0.1 over TLS,
// each taking only certificates of etcd's CA.
func (c *etcdCredentials) etcdArgs(clientURL, peerURL string) []string {
	return []string{
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--cert-file=" + c.serverCert,
		"--key-file=" + c.serverKey,
		"--trusted-ca-file=" + c.caFile,
		"--client-cert-auth=true",
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--peer-cert-file=" + c.serverCert,
		"--peer-key-file=" + c.serverKey,
		"--peer-trusted-ca-file=" + c.caFile,
		"--peer-client-cert-auth=true",
	}
}

// apiServerArgs are kube-apiserver's flags that reach etcd with its client
// certificate.
func (c *etcdCredentials) apiServerArgs() []string {
	return []string{
		"--etcd-cafile=" + c.caFile,
		"--etcd-certfile=" + c.clientCert,
		"--etcd-keyfile=" + c.clientKey,
	}
}
