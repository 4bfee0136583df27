package rayservices

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/ownerref"
)

// ErrNoServePort is returned when the head container has ports but none is
// named "serve", so no serve Service can be built.
var ErrNoServePort = errors.New("please specify the port named 'serve' in the Ray head container; " +
	"otherwise, the Kubernetes service for Ray Serve will not be created")

// Kinds recorded in ray.io/originated-from-crd on serve Services.
const (
	kindRayCluster = "RayCluster"
	kindRayService = "RayService"
)

// ServeServiceEnabled reports whether a RayCluster asks for its own serve
// Service with the annotation ray.io/enable-serve-service: "true".
func ServeServiceEnabled(cluster *rayv1.RayCluster) bool {
	return strings.EqualFold(cluster.Annotations[rayv1.AnnotationEnableServeService], "true")
}

// BuildServeService builds "<cluster>-serve-svc" for a RayCluster that sets
// ray.io/enable-serve-service: it exposes only the head container's "serve"
// port and selects every Pod of the cluster.
func BuildServeService(cluster *rayv1.RayCluster) (*corev1.Service, error) {
	port, ok := servePort(cluster)
	if !ok {
		return nil, ErrNoServePort
	}
	svc := newServeService(cluster.Name, cluster.Namespace, kindRayCluster, cluster.Spec.HeadGroupSpec.ServiceType)
	svc.Spec.Selector = map[string]string{rayv1.LabelCluster: cluster.Name}
	svc.Spec.Ports = []corev1.ServicePort{port}
	svc.OwnerReferences = []metav1.OwnerReference{ownerref.ForCluster(cluster)}
	return svc, nil
}

// BuildRayServiceServeService builds the serve Service a RayService points at
// its ready cluster: "<rayservice>-serve-svc" (or spec.serveService), labelled
// as originating from the RayService and selecting only the cluster's Pods
// that are ready to serve (ray.io/serve=true). A user serveService keeps its
// metadata and type; its selector is replaced, and its ports are replaced by
// the head's "serve" port or, without one, reduced to its own "serve" port.
// The owner reference is left to the caller (the RayService).
func BuildRayServiceServeService(rayService *rayv1.RayService, cluster *rayv1.RayCluster) (*corev1.Service, error) {
	return buildRayServiceServe(rayService, cluster, rayService.Name)
}

// BuildPerClusterServeService builds the serve Service of one RayService
// cluster used as an HTTPRoute backend during incremental upgrades: as
// BuildRayServiceServeService, but named after and owned by the RayCluster,
// so it goes away with that cluster.
func BuildPerClusterServeService(rayService *rayv1.RayService, cluster *rayv1.RayCluster) (*corev1.Service, error) {
	svc, err := buildRayServiceServe(rayService, cluster, cluster.Name)
	if err != nil {
		return nil, err
	}
	svc.OwnerReferences = []metav1.OwnerReference{ownerref.ForCluster(cluster)}
	return svc, nil
}

func buildRayServiceServe(rayService *rayv1.RayService, cluster *rayv1.RayCluster, name string) (*corev1.Service, error) {
	port, hasPort := servePort(cluster)
	selector := map[string]string{rayv1.LabelCluster: cluster.Name, rayv1.LabelServe: "true"}
	serviceType := rayService.Spec.RayClusterSpec.HeadGroupSpec.ServiceType
	custom := rayService.Spec.ServeService
	if custom == nil {
		if !hasPort {
			return nil, ErrNoServePort
		}
		svc := newServeService(name, rayService.Namespace, kindRayService, serviceType)
		svc.Spec.Selector = selector
		svc.Spec.Ports = []corev1.ServicePort{port}
		return svc, nil
	}
	svc := custom.DeepCopy()
	svc.Spec.Selector = selector
	if svc.Annotations == nil {
		svc.Annotations = map[string]string{}
	}
	if hasPort {
		svc.Spec.Ports = []corev1.ServicePort{port}
	} else {
		svc.Spec.Ports = userServePort(svc.Spec.Ports)
	}
	svc.Labels = mergeOver(svc.Labels, serveLabels(name, kindRayService))
	if svc.Name == "" {
		svc.Name = naming.ServeServiceName(name)
	}
	svc.Namespace = rayService.Namespace
	if svc.Spec.Type == "" {
		svc.Spec.Type = serviceType
	}
	return svc, nil
}

func newServeService(name, namespace, kind string, serviceType corev1.ServiceType) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      naming.ServeServiceName(name),
			Namespace: namespace,
			Labels:    serveLabels(name, kind),
		},
		Spec: corev1.ServiceSpec{Type: serviceType},
	}
}

func serveLabels(name, kind string) map[string]string {
	return map[string]string{
		rayv1.LabelOriginatedFromCRName: name,
		rayv1.LabelOriginatedFromCRD:    kind,
		rayv1.LabelServe:                naming.ServeServiceLabel(name),
	}
}

// servePort is the "serve" port among the cluster's Service ports.
func servePort(cluster *rayv1.RayCluster) (corev1.ServicePort, bool) {
	p, ok := PortsOf(cluster)[rayv1.ServingPortName]
	return corev1.ServicePort{Name: rayv1.ServingPortName, Port: p}, ok
}

// userServePort keeps only the name and number of the user's "serve" port.
func userServePort(ports []corev1.ServicePort) []corev1.ServicePort {
	out := []corev1.ServicePort{}
	for _, p := range ports {
		if p.Name == rayv1.ServingPortName {
			return append(out, corev1.ServicePort{Name: p.Name, Port: p.Port})
		}
	}
	return out
}
