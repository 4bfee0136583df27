// Package raytls builds the cert-manager objects of a RayCluster's mutual
// TLS (feature gate RayClusterMTLS, spec.tlsOptions.enabled), as KubeRay
// does: a self-signed Issuer, a CA Certificate it signs, an Issuer of that
// CA, and the head's and the workers' leaf Certificates, whose IP SANs are
// the running Pods' IPs. The builders are pure; the RayCluster controller
// creates and updates the objects.
package raytls

import (
	"slices"
	"strings"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/ownerref"
)

// Values of the app.kubernetes.io/component label of the objects.
const (
	ComponentSelfSignedIssuer = "selfsigned-issuer"
	ComponentCACertificate    = "ca-certificate"
	ComponentCAIssuer         = "ca-issuer"
	ComponentHeadCertificate  = "head-certificate"
	ComponentWorkerCert       = "worker-certificate"
	labelComponent            = "app.kubernetes.io/component"
)

// SecretKeys are the keys a leaf Secret must hold before Pods mount it.
var SecretKeys = []string{"tls.crt", "tls.key", "ca.crt"}

// Labels are the labels of the cluster's cert-manager objects.
func Labels(clusterName, component string) map[string]string {
	return map[string]string{
		rayv1.LabelAppName:   rayv1.AppName,
		rayv1.LabelCreatedBy: rayv1.CreatedByOperator,
		labelComponent:       component,
		rayv1.LabelCluster:   clusterName,
	}
}

// SelectorLabels select every cert-manager object of the cluster.
func SelectorLabels(clusterName string) map[string]string {
	return map[string]string{rayv1.LabelCluster: clusterName, rayv1.LabelCreatedBy: rayv1.CreatedByOperator}
}

func meta(cluster *rayv1.RayCluster, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       cluster.Namespace,
		Labels:          Labels(cluster.Name, component),
		OwnerReferences: []metav1.OwnerReference{ownerref.ForCluster(cluster)},
	}
}

func issuerRef(name string) cmmeta.IssuerReference {
	return cmmeta.IssuerReference{Name: name, Kind: "Issuer", Group: "cert-manager.io"}
}

// Issuers are the self-signed Issuer and the CA Issuer, in KubeRay's order.
func Issuers(cluster *rayv1.RayCluster) []*certmanagerv1.Issuer {
	return []*certmanagerv1.Issuer{
		{
			ObjectMeta: meta(cluster, naming.TLSSelfSignedIssuerName(cluster.Name), ComponentSelfSignedIssuer),
			Spec:       certmanagerv1.IssuerSpec{IssuerConfig: certmanagerv1.IssuerConfig{SelfSigned: &certmanagerv1.SelfSignedIssuer{}}},
		},
		{
			ObjectMeta: meta(cluster, naming.TLSCAIssuerName(cluster.Name), ComponentCAIssuer),
			Spec: certmanagerv1.IssuerSpec{IssuerConfig: certmanagerv1.IssuerConfig{CA: &certmanagerv1.CAIssuer{
				SecretName: naming.TLSCASecretName(cluster.Name, cluster.UID),
			}}},
		},
	}
}

// CACertificate is the cluster's CA: RSA 4096, ten years, renewed 30 days
// before it expires, signed by the self-signed Issuer.
func CACertificate(cluster *rayv1.RayCluster) *certmanagerv1.Certificate {
	return &certmanagerv1.Certificate{
		ObjectMeta: meta(cluster, naming.TLSCACertificateName(cluster.Name), ComponentCACertificate),
		Spec: certmanagerv1.CertificateSpec{
			SecretName:  naming.TLSCASecretName(cluster.Name, cluster.UID),
			IsCA:        true,
			CommonName:  "ray-ca-" + cluster.Name,
			PrivateKey:  &certmanagerv1.CertificatePrivateKey{Algorithm: certmanagerv1.RSAKeyAlgorithm, Size: 4096},
			Duration:    &metav1.Duration{Duration: 3650 * 24 * time.Hour},
			RenewBefore: &metav1.Duration{Duration: 30 * 24 * time.Hour},
			Usages:      []certmanagerv1.KeyUsage{certmanagerv1.UsageCertSign, certmanagerv1.UsageCRLSign},
			IssuerRef:   issuerRef(naming.TLSSelfSignedIssuerName(cluster.Name)),
		},
	}
}

// LeafCertificate is the node type's certificate, signed by the CA Issuer:
// 90 days, renewed 15 days before, for localhost (and, for the head, the
// head Service's FQDN), 127.0.0.1 and podIPs.
func LeafCertificate(cluster *rayv1.RayCluster, nodeType rayv1.RayNodeType, headFQDN string, podIPs []string) *certmanagerv1.Certificate {
	component, dnsNames := ComponentWorkerCert, []string{"localhost"}
	if nodeType == rayv1.HeadNode {
		component = ComponentHeadCertificate
		dnsNames = sets.List(sets.New("localhost", headFQDN))
	}
	return &certmanagerv1.Certificate{
		ObjectMeta: meta(cluster, naming.TLSCertificateName(cluster.Name, nodeType), component),
		Spec: certmanagerv1.CertificateSpec{
			SecretName:  naming.TLSSecretName(cluster.Name, nodeType),
			Duration:    &metav1.Duration{Duration: 2160 * time.Hour},
			RenewBefore: &metav1.Duration{Duration: 360 * time.Hour},
			DNSNames:    dnsNames,
			IPAddresses: normalizeIPs(podIPs),
			Usages: []certmanagerv1.KeyUsage{
				certmanagerv1.UsageDigitalSignature, certmanagerv1.UsageKeyEncipherment,
				certmanagerv1.UsageServerAuth, certmanagerv1.UsageClientAuth,
			},
			IssuerRef: issuerRef(naming.TLSCAIssuerName(cluster.Name)),
		},
	}
}

// Noun names a leaf certificate in events as KubeRay does: "head
// certificate" or "worker certificate".
func Noun(cert *certmanagerv1.Certificate) string {
	return strings.ReplaceAll(cert.Labels[labelComponent], "-", " ")
}

// normalizeIPs sorts and de-duplicates the IPs and adds 127.0.0.1.
func normalizeIPs(ips []string) []string {
	s := sets.New(ips...)
	s.Delete("")
	s.Insert("127.0.0.1")
	return sets.List(s)
}

// PodIPs are the IPs of the Pods of the node type that are not deleted or
// finished, the ones a leaf certificate names.
func PodIPs(pods []corev1.Pod, nodeType rayv1.RayNodeType) []string {
	var ips []string
	for i := range pods {
		p := &pods[i]
		if p.Labels[rayv1.LabelNodeType] != string(nodeType) || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Status.PodIP == "" {
			continue
		}
		ips = append(ips, p.Status.PodIP)
	}
	return ips
}

// LeafUpToDate reports whether existing has desired's labels and, as sets,
// its DNS names and IP addresses (KubeRay updates only then, so that
// cert-manager's normalisation of other fields does not cause reissues).
func LeafUpToDate(existing, desired *certmanagerv1.Certificate) bool {
	return mapsEqual(existing.Labels, desired.Labels) &&
		sameSet(existing.Spec.DNSNames, desired.Spec.DNSNames) &&
		sameSet(existing.Spec.IPAddresses, desired.Spec.IPAddresses)
}

func sameSet(a, b []string) bool {
	return len(a) == len(b) && sets.New(a...).Equal(sets.New(b...))
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Ready reports whether cert-manager has issued the certificate for its
// current spec: Ready is True at the object's generation.
func Ready(cert *certmanagerv1.Certificate) bool {
	i := slices.IndexFunc(cert.Status.Conditions, func(c certmanagerv1.CertificateCondition) bool {
		return c.Type == certmanagerv1.CertificateConditionReady
	})
	if i < 0 {
		return false
	}
	c := cert.Status.Conditions[i]
	return c.Status == cmmeta.ConditionTrue && c.ObservedGeneration == cert.Generation
}

// MissingKey returns the first of SecretKeys the Secret lacks, or "".
func MissingKey(secret *corev1.Secret) string {
	for _, k := range SecretKeys {
		if _, ok := secret.Data[k]; !ok {
			return k
		}
	}
	return ""
}

// Where a cluster's certificates come from: cert-manager (KubeRay's way,
// the default) or the operator itself (internal/clusterpki).
const (
	SourceCertManager = "cert-manager"
	SourceOperator    = "operator"
	// AnnotationCertificates chooses the source of one cluster's
	// certificates over the operator's mtlsCertificates setting. Not a
	// KubeRay annotation.
	AnnotationCertificates = "ray.io/mtls-certificates"
)

// Source is where the cluster's certificates come from: its
// ray.io/mtls-certificates annotation, else def (the operator's setting).
// Validation refuses other annotation values.
func Source(cluster *rayv1.RayCluster, def string) string {
	if v, ok := cluster.Annotations[AnnotationCertificates]; ok {
		return v
	}
	if def == "" {
		return SourceCertManager
	}
	return def
}

// PKISecretNames are the Secrets of the cluster's PKI: the CA's, the
// head's and the workers'.
func PKISecretNames(cluster *rayv1.RayCluster) []string {
	return []string{
		naming.TLSCASecretName(cluster.Name, cluster.UID),
		naming.TLSSecretName(cluster.Name, rayv1.HeadNode),
		naming.TLSSecretName(cluster.Name, rayv1.WorkerNode),
	}
}
