package raycluster_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestServeServiceAndCustomHeadService(t *testing.T) {
	w := newWorld(t)
	rc := w.newCluster("svcs", group("small", 1))
	rc.Annotations = map[string]string{rayv1.AnnotationEnableServeService: "true"}
	rc.Spec.HeadGroupSpec.HeadService = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "my-head", Annotations: map[string]string{"team": "ray"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort},
	}
	w.Create(rc)
	w.WaitPods("svcs", headLabels(), 1)

	head, serve := &corev1.Service{}, &corev1.Service{}
	for name, svc := range map[string]*corev1.Service{"my-head": head, "svcs-serve-svc": serve} {
		w.Eventually("Service "+name, func() (bool, error) {
			err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: name}, svc)
			return err == nil, client.IgnoreNotFound(err)
		})
	}
	if head.Spec.Type != corev1.ServiceTypeNodePort || head.Annotations["team"] != "ray" || head.Spec.Selector[rayv1.LabelNodeType] != "head" {
		t.Errorf("custom head Service = type %s, annotations %v, selector %v", head.Spec.Type, head.Annotations, head.Spec.Selector)
	}
	if len(serve.Spec.Ports) != 1 || serve.Spec.Ports[0].Port != rayv1.DefaultServingPort {
		t.Errorf("serve Service ports = %v, want only serve", serve.Spec.Ports)
	}
	w.waitStatus("svcs", "node ports in the endpoints", func(s *rayv1.RayClusterStatus) bool {
		return s.Head.ServiceName == "my-head" && s.Head.ServiceIP == head.Spec.ClusterIP && s.Endpoints["dashboard"] != "" && s.Endpoints["dashboard"] != "8265"
	})
}
