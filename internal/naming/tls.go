package naming

import (
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Names of the cert-manager objects and Secrets of a cluster's mutual TLS
// (KubeRay's: a prefix and the unclipped cluster name).

// TLSSelfSignedIssuerName is the Issuer that signs the cluster's CA.
func TLSSelfSignedIssuerName(clusterName string) string {
	return "ray-selfsigned-issuer-" + clusterName
}

// TLSCACertificateName is the cluster's CA Certificate.
func TLSCACertificateName(clusterName string) string {
	return "ray-ca-certificate-" + clusterName
}

// TLSCAIssuerName is the Issuer that signs the head and worker certificates
// with the cluster's CA.
func TLSCAIssuerName(clusterName string) string {
	return "ray-ca-issuer-" + clusterName
}

// TLSCASecretName is the CA's Secret: "<cluster>-ca-secret-" and the first 8
// characters of the cluster UID, so that a cluster recreated under the same
// name gets a new CA.
func TLSCASecretName(clusterName string, uid types.UID) string {
	suffix := string(uid)
	if len(suffix) > 8 {
		suffix = suffix[:8]
	}
	return clusterName + "-ca-secret-" + suffix
}

// TLSCertificateName is the leaf Certificate of the node type.
func TLSCertificateName(clusterName string, nodeType rayv1.RayNodeType) string {
	if nodeType == rayv1.HeadNode {
		return "ray-head-cert-" + clusterName
	}
	return "ray-worker-cert-" + clusterName
}

// TLSSecretName is the Secret of the node type's leaf certificate, which its
// Pods mount.
func TLSSecretName(clusterName string, nodeType rayv1.RayNodeType) string {
	if nodeType == rayv1.HeadNode {
		return "ray-head-secret-" + clusterName
	}
	return "ray-worker-secret-" + clusterName
}
