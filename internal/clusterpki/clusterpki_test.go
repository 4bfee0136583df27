package clusterpki_test

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterpki"
	"github.com/ray-operator/ray-operator/internal/raytls"
)

var now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func testCluster() *rayv1.RayCluster {
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", UID: "uid-1"}}
}

func issue(t *testing.T) (ca, head *clusterpki.KeyPair) {
	t.Helper()
	c := testCluster()
	ca, err := clusterpki.Issue(raytls.CACertificate(c), nil, now)
	if err != nil {
		t.Fatal(err)
	}
	leaf := raytls.LeafCertificate(c, rayv1.HeadNode, "rc-head-svc.ns.svc.cluster.local", []string{"10.0.0.7"})
	head, err = clusterpki.Issue(leaf, ca, now)
	if err != nil {
		t.Fatal(err)
	}
	return ca, head
}

// The CA and a leaf are what cert-manager would issue for the same
// Certificates: the CA self-signed with KubeRay's name and lifetime, the
// leaf chaining to it for both TLS roles with the Pod IP and names.
func TestIssue(t *testing.T) {
	ca, head := issue(t)
	if !ca.Cert.IsCA || ca.Cert.Subject.CommonName != "ray-ca-rc" || ca.Cert.CheckSignatureFrom(ca.Cert) != nil {
		t.Errorf("CA: isCA %v, CN %q, self-signed %v", ca.Cert.IsCA, ca.Cert.Subject.CommonName, ca.Cert.CheckSignatureFrom(ca.Cert))
	}
	if got := ca.Cert.NotAfter.Sub(ca.Cert.NotBefore); got != 3650*24*time.Hour || !ca.Cert.NotBefore.Equal(now) {
		t.Errorf("CA valid from %v for %v, want from %v for ten years", ca.Cert.NotBefore, got, now)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := head.Cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now.Add(time.Hour), KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("leaf does not verify for usage %v: %v", usage, err)
		}
	}
	if err := head.Cert.VerifyHostname("10.0.0.7"); err != nil {
		t.Errorf("leaf does not name the Pod IP: %v", err)
	}
	if err := head.Cert.VerifyHostname("rc-head-svc.ns.svc.cluster.local"); err != nil {
		t.Errorf("leaf does not name the head Service: %v", err)
	}
	data := clusterpki.SecretData(head, ca)
	if string(data["ca.crt"]) != string(ca.CertPEM) || len(data["tls.key"]) == 0 {
		t.Errorf("Secret data keys: %v", keys(data))
	}
	back, err := clusterpki.FromSecret(data)
	if err != nil || !back.Cert.Equal(head.Cert) {
		t.Errorf("FromSecret: %v", err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A Secret is issued again when its names, its CA or its time call for it,
// and only then.
func TestReissueReason(t *testing.T) {
	c := testCluster()
	ca, head := issue(t)
	other, err := clusterpki.Issue(raytls.CACertificate(c), nil, now)
	if err != nil {
		t.Fatal(err)
	}
	fqdn := "rc-head-svc.ns.svc.cluster.local"
	spec := raytls.LeafCertificate(c, rayv1.HeadNode, fqdn, []string{"10.0.0.7"})
	short := clusterpki.WithLifetime(spec, 90*time.Second)
	shortPair, err := clusterpki.Issue(short, ca, now)
	if err != nil {
		t.Fatal(err)
	}
	data := clusterpki.SecretData(head, ca)
	tests := map[string]struct {
		data map[string][]byte
		spec *certmanagerv1.Certificate
		ca   *clusterpki.KeyPair
		at   time.Time
		want string
	}{
		"fresh":                 {data, nil, ca, now.Add(time.Hour), ""},
		"a Pod IP added":        {data, raytls.LeafCertificate(c, rayv1.HeadNode, fqdn, []string{"10.0.0.7", "10.0.0.8"}), ca, now, "names changed"},
		"another CA":            {data, nil, other, now, "CA changed"},
		"15 days before expiry": {data, nil, ca, now.Add(75*24*time.Hour + time.Second), "due for renewal"},
		"just before renewal":   {data, nil, ca, now.Add(75*24*time.Hour - time.Second), ""},
		"short-lived at 59 s":   {clusterpki.SecretData(shortPair, ca), short, ca, now.Add(59 * time.Second), ""},
		"short-lived at 60 s":   {clusterpki.SecretData(shortPair, ca), short, ca, now.Add(60 * time.Second), "due for renewal"},
		"not a certificate":     {map[string][]byte{"tls.crt": []byte("x")}, nil, ca, now, "unreadable"},
		"key of another cert":   {map[string][]byte{"tls.crt": head.CertPEM, "tls.key": ca.KeyPEM, "ca.crt": ca.CertPEM}, nil, ca, now, "unreadable"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := spec
			if tc.spec != nil {
				s = tc.spec
			}
			got := clusterpki.ReissueReason(tc.data, s, tc.ca, tc.at)
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("ReissueReason = %q, want %q", got, tc.want)
			}
		})
	}
}
