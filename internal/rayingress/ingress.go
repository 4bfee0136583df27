// Package rayingress builds what exposes a RayCluster's dashboard outside the
// cluster: a Kubernetes Ingress, or an OpenShift Route on OpenShift.
package rayingress

import (
	"maps"

	routev1 "github.com/openshift/api/route/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/ownerref"
)

// routeWeight sends all Route traffic to the head Service.
const routeWeight = int32(100)

// labels are the labels of the Ingress and the Route.
func labels(cluster *rayv1.RayCluster) map[string]string {
	return map[string]string{
		rayv1.LabelCluster:    cluster.Name,
		rayv1.LabelIdentifier: naming.Identifier(cluster.Name, rayv1.HeadNode),
		rayv1.LabelAppName:    rayv1.AppName,
		rayv1.LabelCreatedBy:  rayv1.CreatedByOperator,
	}
}

// BuildIngress builds "<cluster>-head-ingress", routing to the dashboard port
// of the head Service. The cluster's annotations are copied, so users can
// configure their ingress controller (rewrites, ...), except
// kubernetes.io/ingress.class, which becomes spec.ingressClassName: setting
// both is rejected by some controllers. Without headGroupSpec.ingressOptions
// the single rule matches "/<cluster>/(.*)" exactly; with it, the host, path
// ("/" by default), path type (Prefix by default) and TLS come from there.
func BuildIngress(cluster *rayv1.RayCluster) *networkingv1.Ingress {
	annotations := maps.Clone(cluster.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, rayv1.AnnotationIngressClass)

	path := networkingv1.HTTPIngressPath{
		Path:     "/" + cluster.Name + "/(.*)",
		PathType: new(networkingv1.PathTypeExact),
		Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: naming.HeadServiceName(cluster),
			Port: networkingv1.ServiceBackendPort{Number: rayv1.DashboardPort(&cluster.Spec)},
		}},
	}
	rule := networkingv1.IngressRule{}
	ingress := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Name:            naming.IngressName(cluster.Name),
			Namespace:       cluster.Namespace,
			Labels:          labels(cluster),
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{ownerref.ForCluster(cluster)},
		},
	}
	if o := cluster.Spec.HeadGroupSpec.IngressOptions; o != nil {
		path.Path = derefOr(o.Path, "/")
		path.PathType = new(networkingv1.PathType(derefOr(o.PathType, rayv1.IngressPathTypePrefix)))
		rule.Host = derefOr(o.Host, "")
		ingress.Spec.TLS = o.TLS
	}
	rule.HTTP = &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{path}}
	ingress.Spec.Rules = []networkingv1.IngressRule{rule}
	if class, ok := cluster.Annotations[rayv1.AnnotationIngressClass]; ok {
		ingress.Spec.IngressClassName = new(class)
	}
	return ingress
}

// BuildRoute builds the OpenShift Route "<cluster>-head-route" to the
// dashboard port of the head Service, carrying all the cluster's annotations.
func BuildRoute(cluster *rayv1.RayCluster) *routev1.Route {
	annotations := maps.Clone(cluster.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	return &routev1.Route{
		ObjectMeta: metav1.ObjectMeta{
			Name:            naming.RouteNameIn(cluster.Name, cluster.Namespace),
			Namespace:       cluster.Namespace,
			Labels:          labels(cluster),
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{ownerref.ForCluster(cluster)},
		},
		Spec: routev1.RouteSpec{
			To: routev1.RouteTargetReference{
				Kind:   "Service",
				Name:   naming.HeadServiceName(cluster),
				Weight: new(routeWeight),
			},
			Port:           &routev1.RoutePort{TargetPort: intstr.FromInt32(rayv1.DashboardPort(&cluster.Spec))},
			WildcardPolicy: routev1.WildcardPolicyNone,
		},
	}
}

func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
