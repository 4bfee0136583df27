// Package naming derives the deterministic names of the objects a RayCluster
// owns. The names are KubeRay's, so that tools and users that address these
// objects by name keep working, and so that a reconcile working from a stale
// cache computes the same name instead of creating a duplicate.
package naming

import (
	"fmt"
	"strings"
	"unicode"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

const (
	// maxPrefixLength keeps "<prefix>-worker-" plus the 5 random characters the
	// API server appends to a generateName within 63 characters.
	maxPrefixLength = 50
	// maxLabelValueLength is the Kubernetes limit on label values.
	maxLabelValueLength = 63
	// DefaultClusterDomain is the cluster DNS domain when none is configured.
	DefaultClusterDomain = "cluster.local"
)

// ClipName shortens a name to its last 50 characters and replaces a leading
// digit or punctuation character with "r", as KubeRay does for names of
// generated objects (service accounts, roles, auth secrets).
func ClipName(s string) string {
	if len(s) > maxPrefixLength {
		s = s[len(s)-maxPrefixLength:]
	}
	return fixFirstRune(s, true)
}

// ClipLabelValue shortens a label value to its last 63 characters and
// replaces a leading punctuation character with "r".
func ClipLabelValue(s string) string {
	if len(s) > maxLabelValueLength {
		s = s[len(s)-maxLabelValueLength:]
	}
	return fixFirstRune(s, false)
}

func fixFirstRune(s string, noDigit bool) string {
	if s == "" {
		return s
	}
	first := rune(s[0])
	if (noDigit && unicode.IsDigit(first)) || unicode.IsPunct(first) {
		return "r" + s[1:]
	}
	return s
}

// Identifier is the value of the ray.io/identifier label:
// "<cluster>-<node type>", clipped to a valid label value.
func Identifier(clusterName string, nodeType rayv1.RayNodeType) string {
	return ClipLabelValue(fmt.Sprintf("%s-%s", clusterName, nodeType))
}

// podName returns "<prefix>-<node type>", with the prefix cut to 50
// characters, lower-cased, and a trailing dash when used as a generateName.
// A cut right after a '.' of the group name drops the '.': "<x.>-worker-"
// is no DNS subdomain (KubeRay keeps it, and the Pod is refused).
func podName(prefix string, nodeType rayv1.RayNodeType, generate bool) string {
	if len(prefix) > maxPrefixLength {
		prefix = strings.TrimRight(prefix[:maxPrefixLength], ".")
	}
	name := strings.ToLower(prefix + "-" + string(nodeType))
	if generate {
		name += "-"
	}
	return name
}

// HeadPodGenerateName is the generateName of the head Pod: "<cluster>-head-".
func HeadPodGenerateName(clusterName string) string {
	return podName(clusterName, rayv1.HeadNode, true)
}

// HeadPodName is the fixed head Pod name used when deterministic head Pod
// names are enabled (ENABLE_DETERMINISTIC_HEAD_POD_NAME): "<cluster>-head".
func HeadPodName(clusterName string) string {
	return podName(clusterName, rayv1.HeadNode, false)
}

// WorkerPodGenerateName is the generateName of a worker Pod:
// "<cluster>-<group>-worker-".
func WorkerPodGenerateName(clusterName, groupName string) string {
	return podName(clusterName+"-"+groupName, rayv1.WorkerNode, true)
}

// WorkerReplicaName names one replica of a multi-host worker group:
// "<group>-<suffix>", clipped to a label value (its last 63 characters:
// the suffix tells replicas apart; KubeRay does not clip, so a group name
// longer than 57 characters gets Pods the API server refuses). The caller
// supplies the random suffix (KubeRay uses 5 random characters) so that
// this function stays deterministic.
func WorkerReplicaName(groupName, suffix string) string {
	return ClipLabelValue(groupName + "-" + suffix)
}

// HeadServiceName is the name of the RayCluster's head Service: the name of
// spec.headGroupSpec.headService when set, otherwise "<cluster>-head-svc"
// clipped to its last 50 characters (see OwnerHeadServiceName).
func HeadServiceName(cluster *rayv1.RayCluster) string {
	if svc := cluster.Spec.HeadGroupSpec.HeadService; svc != nil && svc.Name != "" {
		return svc.Name
	}
	return OwnerHeadServiceName(cluster.Name)
}

// OwnerHeadServiceName is "<owner>-head-svc", the head Service name KubeRay
// derives from a RayCluster, RayJob or RayService name, clipped with
// ClipName: owners with names longer than 41 characters get the last 50
// characters, as in KubeRay.
func OwnerHeadServiceName(ownerName string) string {
	return ClipName(fmt.Sprintf("%s-%s-svc", ownerName, rayv1.HeadNode))
}

// HeadServiceFQDN is the fully qualified DNS name of the head Service:
// "<head svc>.<namespace>.svc.<domain>". An empty domain means cluster.local.
func HeadServiceFQDN(cluster *rayv1.RayCluster, domain string) string {
	if domain == "" {
		domain = DefaultClusterDomain
	}
	return fmt.Sprintf("%s.%s.svc.%s", HeadServiceName(cluster), cluster.Namespace, domain)
}

// HostFromFQDN returns the first DNS label of an FQDN: the head Service name,
// which KubeRay still exports as the deprecated RAY_IP.
func HostFromFQDN(fqdn string) string {
	host, _, _ := strings.Cut(fqdn, ".")
	return host
}

// HeadlessServiceName is the headless Service of multi-host worker groups:
// "<cluster>-headless", clipped with ClipName as KubeRay clips every Service
// name it creates.
func HeadlessServiceName(clusterName string) string {
	return ClipName(clusterName + "-headless")
}

// ServeServiceName is the Ray Serve Service of a RayCluster or RayService:
// "<name>-serve-svc", clipped with ClipName.
func ServeServiceName(ownerName string) string {
	return ClipName(ownerName + "-serve-svc")
}

// ServeServiceLabel is the ray.io/serve label value on a serve Service:
// "<name>-serve".
func ServeServiceLabel(ownerName string) string {
	return ownerName + "-serve"
}

// IngressName is the dashboard Ingress: "<cluster>-head-ingress", clipped
// with ClipName.
func IngressName(clusterName string) string {
	return ClipName(fmt.Sprintf("%s-%s-ingress", clusterName, rayv1.HeadNode))
}

// RouteName is the dashboard OpenShift Route: "<cluster>-head-route".
func RouteName(clusterName string) string {
	return fmt.Sprintf("%s-%s-route", clusterName, rayv1.HeadNode)
}

// RouteNameIn is the dashboard Route of a cluster in namespace: the
// OpenShift router builds the host from "<route>-<namespace>", which must fit
// in a 63-character DNS label, so "<cluster>-head-route" keeps at most its
// first 51-len(namespace) characters, then goes through ClipName.
func RouteNameIn(clusterName, namespace string) string {
	name := RouteName(clusterName)
	if maxLen := max(maxRouteHostPrefix-len(namespace), 1); len(name) > maxLen {
		name = name[:maxLen]
	}
	return ClipName(name)
}

// maxRouteHostPrefix is 63 minus the "-head-" plus 5 random characters KubeRay
// reserves, minus the dash before the namespace.
const maxRouteHostPrefix = 51

// RedisCleanupJobName is the GCS fault tolerance cleanup Job:
// "<cluster>-redis-cleanup", clipped to 63 characters.
func RedisCleanupJobName(clusterName string) string {
	return ClipLabelValue(clusterName + "-redis-cleanup")
}

// AutoscalerServiceAccountName is the service account of the head Pod when
// in-tree autoscaling is on: the head template's serviceAccountName when set
// (the user must then create it), otherwise the cluster name; clipped.
func AutoscalerServiceAccountName(cluster *rayv1.RayCluster) string {
	if sa := cluster.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName; sa != "" {
		return ClipName(sa)
	}
	return ClipName(cluster.Name)
}

// AutoscalerRoleName is the Role (and RoleBinding) granting the autoscaler
// access to Pods and RayClusters: the cluster name, clipped with ClipName.
func AutoscalerRoleName(clusterName string) string {
	return ClipName(clusterName)
}

// AuthSecretName is the Secret holding the Ray auth token:
// authOptions.secretName when set, otherwise the clipped cluster name.
func AuthSecretName(cluster *rayv1.RayCluster) string {
	if opts := cluster.Spec.AuthOptions; opts != nil && opts.SecretName != nil && *opts.SecretName != "" {
		return *opts.SecretName
	}
	return ClipName(cluster.Name)
}
