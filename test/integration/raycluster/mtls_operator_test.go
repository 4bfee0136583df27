package raycluster_test

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterpki"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// operatorPKISample is the mTLS sample with the certificates issued by the
// operator (the annotation), with the operator's default leaf lifetime.
func operatorPKISample(t *testing.T) *rayv1.RayCluster {
	rc := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	rc.Annotations = map[string]string{"ray.io/mtls-certificates": "operator"}
	return rc
}

func withLeafLifetime(d time.Duration) func(*raycluster.Options) {
	return func(o *raycluster.Options) { o.MTLSCertificateDuration = d }
}

// pkiSecrets waits for the cluster's CA, head and worker Secrets issued
// by the operator and returns their key pairs, checking each is the
// cluster's (controller reference, labels, type) and chains to the CA.
func (w *world) pkiSecrets(rc *rayv1.RayCluster) (ca, head, worker *clusterpki.KeyPair) {
	w.T.Helper()
	names := []string{"raycluster-mtls-ca-secret-" + string(rc.UID)[:8], "ray-head-secret-raycluster-mtls", "ray-worker-secret-raycluster-mtls"}
	pairs := make([]*clusterpki.KeyPair, 3)
	for i, name := range names {
		secret := &corev1.Secret{}
		w.Eventually("Secret "+name, func() (bool, error) { return w.Get(name, secret), nil })
		if !metav1.IsControlledBy(secret, rc) || secret.Type != corev1.SecretTypeTLS || secret.Labels["ray.io/cluster"] != rc.Name {
			w.T.Errorf("Secret %s: owners %v, type %s, labels %v", name, secret.OwnerReferences, secret.Type, secret.Labels)
		}
		kp, err := clusterpki.FromSecret(secret.Data)
		if err != nil {
			w.T.Fatalf("Secret %s: %v", name, err)
		}
		ca := kp // the first Secret is the CA's: its ca.crt is itself
		if i > 0 {
			ca = pairs[0]
		}
		if string(secret.Data["ca.crt"]) != string(ca.CertPEM) {
			w.T.Errorf("Secret %s: ca.crt is not the cluster's CA", name)
		}
		pairs[i] = kp
	}
	for _, leaf := range pairs[1:] {
		if err := leaf.Cert.CheckSignatureFrom(pairs[0].Cert); err != nil {
			w.T.Errorf("leaf %s not signed by the CA: %v", leaf.Cert.Subject, err)
		}
	}
	return pairs[0], pairs[1], pairs[2]
}

// TestMTLSOperatorPKI: with the certificates issued by the operator
// (no cert-manager object), the cluster gets a CA and head and worker
// certificates in the Secrets cert-manager would write, owned by the
// cluster; its Pods are KubeRay's TLS Pods; the leaves follow the Pod IPs;
// a short-lived leaf is issued again before it expires (clock stepped);
// and turning tlsOptions off deletes the Secrets.
func TestMTLSOperatorPKI(t *testing.T) {
	w := newWorld(t, withGates(t, features.RayClusterMTLS), withLeafLifetime(90*time.Second))
	rc := operatorPKISample(t)
	w.Create(rc)
	want := readKubeRayMTLS(t, rc)

	head := w.WaitPods(rc.Name, headLabels(), 1)[0]
	worker := w.WaitPods(rc.Name, groupLabels("small-group"), 1)[0]
	for role, got := range map[string]corev1.Pod{"head": head, "worker": worker} {
		if diff := cmp.Diff(tlsPartsOf(want.Pods[role]), tlsPartsOf(got)); diff != "" {
			t.Errorf("%s Pod: mTLS parts differ from KubeRay's (-KubeRay +ours):\n%s", role, diff)
		}
	}
	if issuers, certs := w.mtlsObjects(); len(issuers)+len(certs) != 0 {
		t.Errorf("%d Issuers and %d Certificates made for operator-issued certificates", len(issuers), len(certs))
	}
	w.WaitEvent(rc.Name, "MTLSPKIReady")
	ca, first, _ := w.pkiSecrets(rc)
	if got := first.Cert.NotAfter.Sub(first.Cert.NotBefore); got != 90*time.Second {
		t.Errorf("leaf lifetime %v, want 90s", got)
	}

	w.setPodIP(&head, kubeRayHeadIP)
	w.setPodIP(&worker, kubeRayWorkerIP)
	var leaf *clusterpki.KeyPair
	w.Eventually("the Pod IPs in the leaf certificates", func() (bool, error) {
		_, leaf, _ = w.pkiSecrets(rc)
		return slices.ContainsFunc(leaf.Cert.IPAddresses, func(ip net.IP) bool { return ip.String() == kubeRayHeadIP }), nil
	})
	if e := w.WaitEvent(rc.Name, "MTLSCertificatesUpdated"); !strings.Contains(e.Note, "again, names changed") {
		t.Errorf("MTLSCertificatesUpdated note = %q", e.Note)
	}

	// 61 s after issue a 90 s leaf is due (a third left): the next pass
	// issues it again with the same CA, before the old one expires.
	w.clock.Step(61 * time.Second)
	w.edit(rc.Name, func(rc *rayv1.RayCluster) { rc.Labels = map[string]string{"touch": "1"} })
	var renewed, sameCA *clusterpki.KeyPair
	w.Eventually("the head leaf renewed", func() (bool, error) {
		sameCA, renewed, _ = w.pkiSecrets(rc)
		return renewed.Cert.SerialNumber.Cmp(leaf.Cert.SerialNumber) != 0, nil
	})
	if !sameCA.Cert.Equal(ca.Cert) {
		t.Error("the CA changed on leaf renewal")
	}
	if !renewed.Cert.NotBefore.After(leaf.Cert.NotBefore) || !renewed.Cert.NotBefore.Before(leaf.Cert.NotAfter) {
		t.Errorf("renewed leaf valid from %v; the old one %v to %v", renewed.Cert.NotBefore, leaf.Cert.NotBefore, leaf.Cert.NotAfter)
	}
	if e := w.WaitEvent(rc.Name, "MTLSCertificateExpiringSoon"); e.Type != corev1.EventTypeWarning {
		t.Errorf("MTLSCertificateExpiringSoon is %s", e.Type)
	}

	w.edit(rc.Name, func(rc *rayv1.RayCluster) { rc.Spec.TLSOptions.Enabled = ptr.To(false) })
	w.Eventually("the PKI Secrets deleted", func() (bool, error) {
		for _, name := range []string{"ray-head-secret-raycluster-mtls", "ray-worker-secret-raycluster-mtls", "raycluster-mtls-ca-secret-" + string(rc.UID)[:8]} {
			if w.Get(name, &corev1.Secret{}) {
				return false, nil
			}
		}
		return true, nil
	})
}

// TestMTLSSwitchToOperatorPKI: a cluster that used cert-manager and is
// switched to operator-issued certificates gets its Secrets taken over
// (owned by the cluster, certificates issued by the operator) and its
// Issuers and Certificates deleted.
func TestMTLSSwitchToOperatorPKI(t *testing.T) {
	w := newWorld(t, withGates(t, features.RayClusterMTLS))
	rc := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	w.Create(rc)
	w.WaitEvent(rc.Name, "MTLSCertsNotReady")
	w.Eventually("3 Certificates", func() (bool, error) {
		_, certs := w.mtlsObjects()
		return len(certs) == 3, nil
	})
	_, certs := w.mtlsObjects()
	for i := range certs {
		w.issue(&certs[i])
	}
	w.WaitPods(rc.Name, nil, 2)
	w.WaitEvent(rc.Name, "MTLSPKIReady")

	w.edit(rc.Name, func(rc *rayv1.RayCluster) { rc.Annotations = map[string]string{"ray.io/mtls-certificates": "operator"} })
	w.Eventually("Issuers and Certificates deleted", func() (bool, error) {
		issuers, certs := w.mtlsObjects()
		return len(issuers)+len(certs) == 0, nil
	})
	w.pkiSecrets(rc)
}

// TestMTLSOperatorPKIWithoutCertManager: on an API server without
// cert-manager's API, a cluster whose certificates the operator issues
// runs, while one asking for cert-manager is refused.
func TestMTLSOperatorPKIWithoutCertManager(t *testing.T) {
	env := testenv.Start(t)
	w := &world{World: testenv.NewWorld(t, env), clock: clocktesting.NewFakeClock(time.Now())}
	opts := raycluster.Options{WatchNamespaces: []string{w.NS}, MTLSCertificates: "operator"}
	withGates(t, features.RayClusterMTLS)(&opts)
	w.op = testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		return raycluster.NewForManager(mgr, raycluster.Deps{Core: managerdeps.Core{Clock: w.clock}}, opts).SetupWithManager(mgr, 1)
	})
	rc := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	w.Create(rc)
	w.WaitPods(rc.Name, nil, 2)
	w.pkiSecrets(rc)
	refused := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	refused.Name = "wants-cert-manager"
	refused.Annotations = map[string]string{"ray.io/mtls-certificates": "cert-manager"}
	w.Create(refused)
	if e := w.WaitEvent(refused.Name, "InvalidRayClusterSpec"); !strings.Contains(e.Note, "cert-manager is not installed") {
		t.Errorf("event note = %q", e.Note)
	}
}

// TestMTLSOperatorPKILeavesForeignSecret: a Secret of a certificate's name
// that is neither the cluster's nor cert-manager's is not overwritten; the
// cluster is reported (MTLSFailedToReconcile) and gets no Pod.
func TestMTLSOperatorPKILeavesForeignSecret(t *testing.T) {
	w := newWorld(t, withGates(t, features.RayClusterMTLS))
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ray-head-secret-raycluster-mtls"},
		Data:       map[string][]byte{"tls.crt": []byte("mine")},
	}
	w.Create(foreign)
	rc := operatorPKISample(t)
	w.Create(rc)
	e := w.WaitEvent(rc.Name, "MTLSFailedToReconcile")
	if !strings.Contains(e.Note, "secret ray-head-secret-raycluster-mtls exists and is neither this RayCluster's nor written by cert-manager for it") {
		t.Errorf("event note = %q", e.Note)
	}
	got := &corev1.Secret{}
	w.Get(foreign.Name, got)
	if string(got.Data["tls.crt"]) != "mine" || len(got.OwnerReferences) != 0 {
		t.Errorf("the foreign Secret was changed: %v, owners %v", got.Data, got.OwnerReferences)
	}
	if pods := w.Pods(rc.Name, nil); len(pods) != 0 {
		t.Errorf("%d Pods created without the head certificate", len(pods))
	}
}
