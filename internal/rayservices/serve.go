package rayservices

import (
	"errors"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/ownerref"
)

// ErrNoServePort is returned when no "serve" port can be found for the
// serve Service: the head container declares none and the default 8000 is
// taken by another port.
var ErrNoServePort = errors.New("please specify the port named 'serve' in the Ray head container; " +
	"otherwise, the Kubernetes service for Ray Serve will not be created")

// ErrNoServePortAnywhere is returned for a RayService serveService without a
// "serve" port when the head offers none either.
var ErrNoServePortAnywhere = errors.New("please specify the port named 'serve' in the Ray head container or in RayService.Spec.ServeService")

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
	svc := newServeService(cluster.Name, cluster.Namespace, rayv1.KindRayCluster, cluster.Spec.HeadGroupSpec.ServiceType)
	svc.Spec.Selector = map[string]string{rayv1.LabelCluster: cluster.Name}
	svc.Spec.Ports = []corev1.ServicePort{port}
	svc.OwnerReferences = []metav1.OwnerReference{ownerref.ForCluster(cluster)}
	return svc, nil
}

// BuildRayServiceServeService builds the serve Service a RayService points at
// its ready cluster: "<rayservice>-serve-svc" (or spec.serveService), labelled
// as originating from the RayService and selecting only the cluster's Pods
// that are ready to serve (ray.io/serve=true). Its ports are the head's Serve
// ports ("serve" and "serve-*"). A user serveService keeps its metadata and
// type; its selector is replaced, and its Serve ports are merged with the
// head's, the user's winning by name. The owner reference is left to the
// caller (the RayService).
func BuildRayServiceServeService(rayService *rayv1.RayService, cluster *rayv1.RayCluster) (*corev1.Service, error) {
	return buildRayServiceServe(rayService, cluster, rayService.Name, rayService.Spec.ServeService)
}

// BuildPerClusterServeService builds the serve Service of one RayService
// cluster used as an HTTPRoute backend during incremental upgrades: named
// after and owned by the RayCluster, so it goes away with that cluster. As
// in KubeRay, spec.serveService does not apply to it.
func BuildPerClusterServeService(rayService *rayv1.RayService, cluster *rayv1.RayCluster) (*corev1.Service, error) {
	svc, err := buildRayServiceServe(rayService, cluster, cluster.Name, nil)
	if err != nil {
		return nil, err
	}
	svc.OwnerReferences = []metav1.OwnerReference{ownerref.ForCluster(cluster)}
	return svc, nil
}

func buildRayServiceServe(rayService *rayv1.RayService, cluster *rayv1.RayCluster, name string, custom *corev1.Service) (*corev1.Service, error) {
	selector := map[string]string{rayv1.LabelCluster: cluster.Name, rayv1.LabelServe: "true"}
	serviceType := rayService.Spec.RayClusterSpec.HeadGroupSpec.ServiceType
	if custom == nil {
		ports := servePorts(cluster)
		if len(ports) == 0 {
			return nil, ErrNoServePort
		}
		svc := newServeService(name, rayService.Namespace, rayv1.KindRayService, serviceType)
		svc.Spec.Selector = selector
		svc.Spec.Ports = ports
		return svc, nil
	}
	svc := custom.DeepCopy()
	svc.Spec.Selector = selector
	if svc.Annotations == nil {
		svc.Annotations = map[string]string{}
	}
	ports := customServePorts(cluster, svc.Spec.Ports)
	if len(ports) == 0 {
		return nil, ErrNoServePortAnywhere
	}
	svc.Spec.Ports = ports
	svc.Labels = mergeOver(svc.Labels, serveLabels(name, rayv1.KindRayService))
	if svc.Name == "" {
		svc.Name = naming.ServeServiceName(name)
	}
	svc.Namespace = rayService.Namespace
	if svc.Spec.Type == "" {
		svc.Spec.Type = serviceType
	}
	return svc, nil
}

// isServePort reports whether a port name is Serve's: "serve" (HTTP) or
// "serve-*" (for example gRPC).
func isServePort(name string) bool {
	return name == rayv1.ServingPortName || strings.HasPrefix(name, rayv1.ServingPortName+"-")
}

// servePorts are the cluster's Serve ports ("serve" and "serve-*"), sorted
// by name.
func servePorts(cluster *rayv1.RayCluster) []corev1.ServicePort {
	ports := PortsOf(cluster)
	var out []corev1.ServicePort
	for _, name := range slices.Sorted(maps.Keys(ports)) {
		if isServePort(name) {
			out = append(out, corev1.ServicePort{Name: name, Port: ports[name]})
		}
	}
	return out
}

// customServePorts merges the cluster's Serve ports with the Serve ports of
// a user serveService: a user port of the same name wins whole (its
// appProtocol, nodePort and targetPort kept), and a user Serve port the
// head lacks is kept too. Other user ports are dropped: the Service carries
// Serve traffic only.
func customServePorts(cluster *rayv1.RayCluster, userPorts []corev1.ServicePort) []corev1.ServicePort {
	byName := map[string]corev1.ServicePort{}
	for _, p := range servePorts(cluster) {
		byName[p.Name] = p
	}
	for _, p := range userPorts {
		if isServePort(p.Name) {
			byName[p.Name] = p
		}
	}
	out := make([]corev1.ServicePort, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out
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
