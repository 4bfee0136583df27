package rayingress

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func newCluster(mutators ...func(*rayv1.RayCluster)) *rayv1.RayCluster {
	c := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster", Namespace: "default", UID: "uid-1"},
		Spec: rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head"}}}},
		}},
	}
	for _, m := range mutators {
		m(c)
	}
	return c
}

func wantMeta(name string, annotations map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: "default", Annotations: annotations,
		Labels: map[string]string{"ray.io/cluster": "raycluster", "ray.io/identifier": "raycluster-head",
			"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster", UID: "uid-1",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}
}

func rule(host, path string, pathType networkingv1.PathType, port int32) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &pathType, Backend: networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "raycluster-head-svc", Port: networkingv1.ServiceBackendPort{Number: port}},
		}}},
	}}}
}

func TestBuildIngress(t *testing.T) {
	tls := []networkingv1.IngressTLS{{Hosts: []string{"ray.example.com"}, SecretName: "tls"}}
	tests := map[string]struct {
		mutate func(*rayv1.RayCluster)
		want   *networkingv1.Ingress
	}{
		"legacy path, no class": {
			mutate: func(*rayv1.RayCluster) {},
			want: &networkingv1.Ingress{ObjectMeta: wantMeta("raycluster-head-ingress", map[string]string{}),
				Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{rule("", "/raycluster/(.*)", networkingv1.PathTypeExact, 8265)}}},
		},
		"class from annotation, other annotations copied, custom dashboard port": {
			mutate: func(c *rayv1.RayCluster) {
				c.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx", "nginx.ingress.kubernetes.io/rewrite-target": "/$1"}
				c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 9265}}
			},
			want: &networkingv1.Ingress{ObjectMeta: wantMeta("raycluster-head-ingress", map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/$1"}),
				Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("nginx"),
					Rules: []networkingv1.IngressRule{rule("", "/raycluster/(.*)", networkingv1.PathTypeExact, 9265)}}},
		},
		"ingressOptions defaults": {
			mutate: func(c *rayv1.RayCluster) { c.Spec.HeadGroupSpec.IngressOptions = &rayv1.IngressOptions{} },
			want: &networkingv1.Ingress{ObjectMeta: wantMeta("raycluster-head-ingress", map[string]string{}),
				Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{rule("", "/", networkingv1.PathTypePrefix, 8265)}}},
		},
		"ingressOptions host, path, type, tls": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.IngressOptions = &rayv1.IngressOptions{Host: ptr.To("ray.example.com"), Path: ptr.To("/ray(/|$)(.*)"),
					PathType: ptr.To(rayv1.IngressPathTypeImplementationSpecific), TLS: tls}
			},
			want: &networkingv1.Ingress{ObjectMeta: wantMeta("raycluster-head-ingress", map[string]string{}),
				Spec: networkingv1.IngressSpec{TLS: tls,
					Rules: []networkingv1.IngressRule{rule("ray.example.com", "/ray(/|$)(.*)", networkingv1.PathTypeImplementationSpecific, 8265)}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, BuildIngress(newCluster(tc.mutate))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildRoute(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx", "haproxy.router.openshift.io/timeout": "5m"}
		c.Spec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "my-head"}}
	})
	want := &routev1.Route{
		ObjectMeta: wantMeta("raycluster-head-route", map[string]string{"kubernetes.io/ingress.class": "nginx", "haproxy.router.openshift.io/timeout": "5m"}),
		Spec: routev1.RouteSpec{
			To:             routev1.RouteTargetReference{Kind: "Service", Name: "my-head", Weight: ptr.To(int32(100))},
			Port:           &routev1.RoutePort{TargetPort: intstr.FromInt32(8265)},
			WildcardPolicy: routev1.WildcardPolicyNone,
		},
	}
	if diff := cmp.Diff(want, BuildRoute(c)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
