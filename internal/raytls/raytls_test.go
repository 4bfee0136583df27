package raytls

import (
	"testing"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func pod(nodeType rayv1.RayNodeType, ip string, phase corev1.PodPhase, deleting bool) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{rayv1.LabelNodeType: string(nodeType)}},
		Status:     corev1.PodStatus{PodIP: ip, Phase: phase},
	}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{}
	}
	return p
}

// TestLeafCertificateSANs: the IP SANs are the running Pods of the node
// type, sorted, without duplicates, with 127.0.0.1; finished, deleted and
// IP-less Pods are left out; the head also names its Service.
func TestLeafCertificateSANs(t *testing.T) {
	pods := []corev1.Pod{
		pod(rayv1.WorkerNode, "10.0.0.9", corev1.PodRunning, false),
		pod(rayv1.WorkerNode, "10.0.0.3", corev1.PodPending, false),
		pod(rayv1.WorkerNode, "10.0.0.3", corev1.PodRunning, false),
		pod(rayv1.WorkerNode, "10.0.0.4", corev1.PodSucceeded, false),
		pod(rayv1.WorkerNode, "10.0.0.5", corev1.PodFailed, false),
		pod(rayv1.WorkerNode, "10.0.0.6", corev1.PodRunning, true),
		pod(rayv1.WorkerNode, "", corev1.PodPending, false),
		pod(rayv1.HeadNode, "10.0.0.1", corev1.PodRunning, false),
	}
	c := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", UID: "abcdefgh-1"}}
	w := LeafCertificate(c, rayv1.WorkerNode, "rc-head-svc.ns.svc.cluster.local", PodIPs(pods, rayv1.WorkerNode))
	if diff := cmp.Diff([]string{"10.0.0.3", "10.0.0.9", "127.0.0.1"}, w.Spec.IPAddresses); diff != "" {
		t.Errorf("worker IPs (-want +got):\n%s", diff)
	}
	h := LeafCertificate(c, rayv1.HeadNode, "rc-head-svc.ns.svc.cluster.local", PodIPs(pods, rayv1.HeadNode))
	if diff := cmp.Diff([]string{"localhost", "rc-head-svc.ns.svc.cluster.local"}, h.Spec.DNSNames); diff != "" {
		t.Errorf("head DNS names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"10.0.0.1", "127.0.0.1"}, h.Spec.IPAddresses); diff != "" {
		t.Errorf("head IPs (-want +got):\n%s", diff)
	}
	if got := CACertificate(c).Spec.SecretName; got != "rc-ca-secret-abcdefgh" {
		t.Errorf("CA Secret = %s", got)
	}
}

// TestLeafUpToDate: SANs compare as sets; other spec fields are not
// compared (cert-manager may normalise them).
func TestLeafUpToDate(t *testing.T) {
	c := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns"}}
	desired := LeafCertificate(c, rayv1.WorkerNode, "", []string{"10.0.0.2", "10.0.0.1"})
	existing := desired.DeepCopy()
	existing.Spec.IPAddresses = []string{"127.0.0.1", "10.0.0.2", "10.0.0.1"}
	existing.Spec.Duration = nil
	if !LeafUpToDate(existing, desired) {
		t.Error("reordered SANs are not up to date")
	}
	existing.Spec.IPAddresses = existing.Spec.IPAddresses[:2]
	if LeafUpToDate(existing, desired) {
		t.Error("a missing IP SAN is up to date")
	}
}

// TestReady: Ready True counts only at the object's generation.
func TestReady(t *testing.T) {
	cert := &certmanagerv1.Certificate{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	if Ready(cert) {
		t.Error("no condition is ready")
	}
	cert.Status.Conditions = []certmanagerv1.CertificateCondition{{Type: certmanagerv1.CertificateConditionReady, Status: cmmeta.ConditionTrue, ObservedGeneration: 1}}
	if Ready(cert) {
		t.Error("Ready of an older generation is ready")
	}
	cert.Status.Conditions[0].ObservedGeneration = 2
	if !Ready(cert) {
		t.Error("Ready at the generation is not ready")
	}
}

func TestMissingKey(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}
	if got := MissingKey(s); got != "ca.crt" {
		t.Errorf("MissingKey = %q", got)
	}
	s.Data["ca.crt"] = nil
	if got := MissingKey(s); got != "" {
		t.Errorf("MissingKey = %q", got)
	}
}
