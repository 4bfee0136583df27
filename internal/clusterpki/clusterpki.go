// Package clusterpki issues a RayCluster's mutual-TLS certificates in the
// operator itself, for clusters that do not use cert-manager (configuration
// mtlsCertificates: operator, or the annotation ray.io/mtls-certificates).
// The certificates are described by the same cert-manager Certificate
// objects internal/raytls builds for the cert-manager path, and are made
// with cert-manager's own pki package from them, so both paths issue the
// same names, key usages, key types and lifetimes. The Secrets hold what
// cert-manager writes: tls.crt, tls.key and ca.crt.
//
// The functions are pure apart from drawing keys and serial numbers from
// crypto/rand; the time is always passed in.
package clusterpki

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/cert-manager/cert-manager/pkg/util/pki"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// MinDuration is the shortest leaf lifetime the operator issues.
const MinDuration = time.Minute

// KeyPair is an issued certificate and its private key.
type KeyPair struct {
	Cert    *x509.Certificate
	CertPEM []byte
	Key     crypto.Signer
	KeyPEM  []byte
}

// Issue makes a new key and a certificate for spec valid from now for the
// spec's duration, signed by ca; a nil ca makes it self-signed.
func Issue(spec *certmanagerv1.Certificate, ca *KeyPair, now time.Time) (*KeyPair, error) {
	template, err := pki.CertificateTemplateFromCertificate(spec)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", spec.Name, err)
	}
	lifetime := template.NotAfter.Sub(template.NotBefore)
	template.NotBefore, template.NotAfter = now, now.Add(lifetime)
	key, err := pki.GeneratePrivateKeyForCertificate(spec)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", spec.Name, err)
	}
	issuerCert, signer := template, key
	if ca != nil {
		issuerCert, signer = ca.Cert, ca.Key
	}
	certPEM, cert, err := pki.SignCertificate(template, issuerCert, key.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", spec.Name, err)
	}
	keyPEM, err := pki.EncodePrivateKey(key, certmanagerv1.PKCS1)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", spec.Name, err)
	}
	return &KeyPair{Cert: cert, CertPEM: certPEM, Key: key, KeyPEM: keyPEM}, nil
}

// SecretData is the Secret content of kp issued by ca (nil: kp is the CA),
// with cert-manager's keys.
func SecretData(kp, ca *KeyPair) map[string][]byte {
	caPEM := kp.CertPEM
	if ca != nil {
		caPEM = ca.CertPEM
	}
	return map[string][]byte{
		corev1.TLSCertKey:       kp.CertPEM,
		corev1.TLSPrivateKeyKey: kp.KeyPEM,
		"ca.crt":                caPEM,
	}
}

// FromSecret reads the certificate and key of a Secret's data.
func FromSecret(data map[string][]byte) (*KeyPair, error) {
	cert, err := pki.DecodeX509CertificateBytes(data[corev1.TLSCertKey])
	if err != nil {
		return nil, err
	}
	key, err := pki.DecodePrivateKeyBytes(data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, err
	}
	if ok, err := pki.PublicKeyMatchesCertificate(key.Public(), cert); err != nil || !ok {
		return nil, fmt.Errorf("the private key does not match the certificate")
	}
	return &KeyPair{Cert: cert, CertPEM: data[corev1.TLSCertKey], Key: key, KeyPEM: data[corev1.TLSPrivateKeyKey]}, nil
}

// RenewalTime is when kp is due for renewal under spec's renewBefore, as
// cert-manager computes it.
func RenewalTime(kp *KeyPair, spec *certmanagerv1.Certificate) time.Time {
	t, err := pki.RenewalTime(kp.Cert.NotBefore, kp.Cert.NotAfter, spec.Spec.RenewBefore, spec.Spec.RenewBeforePercentage, nil)
	if err != nil || t == nil {
		return kp.Cert.NotAfter
	}
	return t.Time
}

// ReissueReason says why the Secret data must be issued again for spec,
// signed by ca (nil for the CA itself), at now; "" when it is good.
func ReissueReason(data map[string][]byte, spec *certmanagerv1.Certificate, ca *KeyPair, now time.Time) string {
	kp, err := FromSecret(data)
	switch {
	case err != nil:
		return "unreadable: " + err.Error()
	case !NamesMatch(kp.Cert, spec):
		return "names changed"
	case ca != nil && (!bytes.Equal(data["ca.crt"], ca.CertPEM) || kp.Cert.CheckSignatureFrom(ca.Cert) != nil):
		return "CA changed"
	case !now.Before(RenewalTime(kp, spec)):
		return fmt.Sprintf("due for renewal (expires %s)", kp.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return ""
}

// NamesMatch reports whether cert names exactly spec's common name, DNS
// names and IP addresses.
func NamesMatch(cert *x509.Certificate, spec *certmanagerv1.Certificate) bool {
	ips := make([]string, 0, len(cert.IPAddresses))
	for _, ip := range cert.IPAddresses {
		ips = append(ips, ip.String())
	}
	want := make([]string, 0, len(spec.Spec.IPAddresses))
	for _, s := range spec.Spec.IPAddresses {
		if ip := net.ParseIP(s); ip != nil {
			want = append(want, ip.String())
		}
	}
	return cert.Subject.CommonName == spec.Spec.CommonName &&
		sets.New(cert.DNSNames...).Equal(sets.New(spec.Spec.DNSNames...)) &&
		sets.New(ips...).Equal(sets.New(want...))
}

// WithLifetime returns a copy of a leaf spec issued for d: renewed when a
// third of d is left, or the spec's renewBefore if that is sooner.
func WithLifetime(spec *certmanagerv1.Certificate, d time.Duration) *certmanagerv1.Certificate {
	out := spec.DeepCopy()
	before := d / 3
	if rb := spec.Spec.RenewBefore; rb != nil && rb.Duration < before {
		before = rb.Duration
	}
	out.Spec.Duration = &metav1.Duration{Duration: d}
	out.Spec.RenewBefore = &metav1.Duration{Duration: before}
	return out
}
