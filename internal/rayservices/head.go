package rayservices

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/ownerref"
)

// HeadServiceOptions are the operator knobs of the head Service.
type HeadServiceOptions struct {
	// ClusterIP keeps a normal ClusterIP head Service instead of a headless
	// one (ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE=true).
	ClusterIP bool
}

// HeadServiceLabels are the labels, and the selector, of the head Service.
// They select the head Pod; app.kubernetes.io/name follows the head Pod
// template when it sets one.
func HeadServiceLabels(cluster *rayv1.RayCluster) map[string]string {
	labels := baseHeadLabels(cluster)
	if v, ok := cluster.Spec.HeadGroupSpec.Template.Labels[rayv1.LabelAppName]; ok {
		labels[rayv1.LabelAppName] = v
	}
	return labels
}

func baseHeadLabels(cluster *rayv1.RayCluster) map[string]string {
	return map[string]string{
		rayv1.LabelCluster:    cluster.Name,
		rayv1.LabelNodeType:   string(rayv1.HeadNode),
		rayv1.LabelIdentifier: naming.Identifier(cluster.Name, rayv1.HeadNode),
		rayv1.LabelAppName:    rayv1.AppName,
		rayv1.LabelCreatedBy:  rayv1.CreatedByOperator,
	}
}

// BuildHeadService builds the Service workers and clients use to reach the
// head. Without spec.headGroupSpec.headService it is "<cluster>-head-svc"
// with the head container's ports, headless with publishNotReadyAddresses
// unless opts.ClusterIP is set or the service type is not ClusterIP. With a
// user headService, that object is the base: its selector is replaced, its
// labels and annotations are merged under the operator's (operator values
// win), the operator's ports replace user ports of the same name (named
// ports sorted, unnamed ones last), and name, type default to
// the operator's while the namespace is always the cluster's.
func BuildHeadService(cluster *rayv1.RayCluster, opts HeadServiceOptions) *corev1.Service {
	return buildHeadService(cluster, opts, HeadServiceLabels(cluster), maps.Clone(cluster.Spec.HeadServiceAnnotations))
}

func buildHeadService(cluster *rayv1.RayCluster, opts HeadServiceOptions, labels, annotations map[string]string) *corev1.Service {
	if annotations == nil {
		annotations = map[string]string{}
	}
	serviceType := cluster.Spec.HeadGroupSpec.ServiceType
	ports := headServicePorts(PortsOf(cluster))

	if custom := cluster.Spec.HeadGroupSpec.HeadService; custom != nil {
		svc := custom.DeepCopy()
		svc.Spec.Selector = labels
		svc.Annotations = mergeOver(svc.Annotations, annotations)
		svc.Spec.Ports = mergePorts(svc.Spec.Ports, ports)
		adoptUserService(svc, cluster, naming.HeadServiceName(cluster), maps.Clone(labels), serviceType)
		return svc
	}

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            naming.HeadServiceName(cluster),
			Namespace:       cluster.Namespace,
			Labels:          maps.Clone(labels),
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{ownerref.ForCluster(cluster)},
		},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: ports, Type: serviceType},
	}
	if !opts.ClusterIP && (serviceType == "" || serviceType == corev1.ServiceTypeClusterIP) {
		// A cluster has at most one head: resolve straight to its Pod IP, and
		// keep resolving while its probes fail.
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.PublishNotReadyAddresses = true
	}
	return svc
}

// adoptUserService finishes a user-provided Service: operator labels win over
// the user's, the name and type default to the operator's, the namespace is
// always the cluster's and the cluster becomes the controller owner.
func adoptUserService(svc *corev1.Service, cluster *rayv1.RayCluster, name string, labels map[string]string, serviceType corev1.ServiceType) {
	svc.Labels = mergeOver(svc.Labels, labels)
	if svc.Name == "" {
		svc.Name = name
	}
	svc.Namespace = cluster.Namespace
	if svc.Spec.Type == "" {
		svc.Spec.Type = serviceType
	}
	svc.OwnerReferences = []metav1.OwnerReference{ownerref.ForCluster(cluster)}
}

// mergeOver copies over onto base (over wins) and returns the result.
func mergeOver(base, over map[string]string) map[string]string {
	if base == nil {
		base = map[string]string{}
	}
	maps.Copy(base, over)
	return base
}

// BuildHeadlessService builds "<cluster>-headless", the headless Service
// multi-host worker groups use to reach each other; it publishes workers
// before they are ready because peers must find each other to get ready.
func BuildHeadlessService(cluster *rayv1.RayCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            naming.HeadlessServiceName(cluster.Name),
			Namespace:       cluster.Namespace,
			Labels:          map[string]string{rayv1.LabelHeadlessWorkerService: cluster.Name},
			OwnerReferences: []metav1.OwnerReference{ownerref.ForCluster(cluster)},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{rayv1.LabelCluster: cluster.Name, rayv1.LabelNodeType: string(rayv1.WorkerNode)},
			Type:                     corev1.ServiceTypeClusterIP,
			PublishNotReadyAddresses: true,
		},
	}
}

// NeedsHeadlessService reports whether any worker group is multi-host
// (numOfHosts > 1), which is when the headless Service exists.
func NeedsHeadlessService(cluster *rayv1.RayCluster) bool {
	for _, g := range cluster.Spec.WorkerGroupSpecs {
		if g.NumOfHosts > 1 {
			return true
		}
	}
	return false
}

// BuildOwnerHeadService builds the head Service a RayService or RayJob keeps
// for itself so that its address survives cluster switches:
// "<owner>-head-svc", selecting the given cluster's head, labelled with the
// owner's name and kind. ownerKind is "RayService" or "RayJob". The owner
// reference is left to the caller. Unlike the cluster's own head Service, it
// ignores headServiceAnnotations and the template's app.kubernetes.io/name,
// as KubeRay does.
func BuildOwnerHeadService(cluster *rayv1.RayCluster, ownerName, ownerNamespace, ownerKind string, opts HeadServiceOptions) *corev1.Service {
	svc := buildHeadService(cluster, opts, baseHeadLabels(cluster), nil)
	svc.Name = naming.OwnerHeadServiceName(ownerName)
	svc.Namespace = ownerNamespace
	svc.Labels = map[string]string{
		rayv1.LabelOriginatedFromCRName: ownerName,
		rayv1.LabelOriginatedFromCRD:    ownerKind,
		rayv1.LabelNodeType:             string(rayv1.HeadNode),
		rayv1.LabelIdentifier:           naming.Identifier(ownerName, rayv1.HeadNode),
	}
	svc.OwnerReferences = nil
	return svc
}
