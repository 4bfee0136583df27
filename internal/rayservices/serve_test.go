package rayservices

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// serveTaken gives the head a port on 8000 under another name, so that no
// default serve port can be added.
func serveTaken(c *rayv1.RayCluster) {
	c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}}
}

func TestBuildServeService(t *testing.T) {
	labels := map[string]string{"ray.io/originated-from-cr-name": "raycluster", "ray.io/originated-from-crd": "RayCluster", "ray.io/serve": "raycluster-serve"}
	tests := map[string]struct {
		mutate  func(*rayv1.RayCluster)
		want    *corev1.Service
		wantErr error
	}{
		"default serve port": {
			mutate: func(c *rayv1.RayCluster) { c.Spec.HeadGroupSpec.ServiceType = corev1.ServiceTypeNodePort },
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "raycluster-serve-svc", Namespace: "default", Labels: labels, OwnerReferences: owner()},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"ray.io/cluster": "raycluster"},
					Ports: []corev1.ServicePort{{Name: "serve", Port: 8000}}},
			},
		},
		"serve port from the head container": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "serve", ContainerPort: 9000}, {Name: "dashboard", ContainerPort: 8265}}
			},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "raycluster-serve-svc", Namespace: "default", Labels: labels, OwnerReferences: owner()},
				Spec:       corev1.ServiceSpec{Selector: map[string]string{"ray.io/cluster": "raycluster"}, Ports: []corev1.ServicePort{{Name: "serve", Port: 9000}}},
			},
		},
		"head declares ports but no serve port: no default is added": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8265}}
			},
			wantErr: ErrNoServePort,
		},
		"8000 taken by another port: no serve port": {mutate: serveTaken, wantErr: ErrNoServePort},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := BuildServeService(newCluster(tc.mutate))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestServeServiceEnabled(t *testing.T) {
	got := []bool{
		ServeServiceEnabled(newCluster(func(c *rayv1.RayCluster) { c.Annotations = map[string]string{"ray.io/enable-serve-service": "true"} })),
		ServeServiceEnabled(newCluster(func(c *rayv1.RayCluster) { c.Annotations = map[string]string{"ray.io/enable-serve-service": "false"} })),
		ServeServiceEnabled(newCluster()),
	}
	if diff := cmp.Diff([]bool{true, false, false}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBuildRayServiceServeService(t *testing.T) {
	labels := map[string]string{"ray.io/originated-from-cr-name": "mysvc", "ray.io/originated-from-crd": "RayService", "ray.io/serve": "mysvc-serve"}
	selector := map[string]string{"ray.io/cluster": "raycluster", "ray.io/serve": "true"}
	noServe := func(c *rayv1.RayCluster) {
		c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8265}}
	}
	tests := map[string]struct {
		custom  *corev1.Service
		mutate  func(*rayv1.RayCluster)
		want    *corev1.Service
		wantErr error
	}{
		"default": {
			mutate: func(*rayv1.RayCluster) {},
			want: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "mysvc-serve-svc", Namespace: "ns", Labels: labels},
				Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Name: "serve", Port: 8000}}}},
		},
		"custom service, head serve port wins over user ports": {
			custom: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "custom", Labels: map[string]string{"x": "1"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Name: "other", Port: 1}}}},
			mutate: func(*rayv1.RayCluster) {},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "custom", Namespace: "ns", Annotations: map[string]string{},
					Labels: map[string]string{"x": "1", "ray.io/originated-from-cr-name": "mysvc", "ray.io/originated-from-crd": "RayService", "ray.io/serve": "mysvc-serve"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: selector, Ports: []corev1.ServicePort{{Name: "serve", Port: 8000}}},
			},
		},
		"custom service without serve port, head declares none: error": {
			custom:  &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "other", Port: 1}}}},
			mutate:  noServe,
			wantErr: ErrNoServePortAnywhere,
		},
		"custom service without serve port and 8000 taken": {
			custom:  &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "other", Port: 1}}}},
			mutate:  serveTaken,
			wantErr: ErrNoServePortAnywhere,
		},
		"custom service serve port wins over the default one, whole": {
			custom: &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "other", Port: 1}, {Name: "serve", Port: 7000, NodePort: 30000}}}},
			mutate: noServe,
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "mysvc-serve-svc", Namespace: "ns", Annotations: map[string]string{}, Labels: labels},
				Spec:       corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Name: "serve", Port: 7000, NodePort: 30000}}},
			},
		},
		"gRPC serve port of the head": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "serve", ContainerPort: 8000}, {Name: "serve-grpc", ContainerPort: 9000}}
			},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "mysvc-serve-svc", Namespace: "ns", Labels: labels},
				Spec:       corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Name: "serve", Port: 8000}, {Name: "serve-grpc", Port: 9000}}},
			},
		},
		"custom service: the user's gRPC port keeps its appProtocol": {
			custom: &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "serve-grpc", Port: 9000, AppProtocol: ptr.To("grpc")}}}},
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "serve", ContainerPort: 8000}, {Name: "serve-grpc", ContainerPort: 9000}}
			},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "mysvc-serve-svc", Namespace: "ns", Annotations: map[string]string{}, Labels: labels},
				Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{
					{Name: "serve", Port: 8000}, {Name: "serve-grpc", Port: 9000, AppProtocol: ptr.To("grpc")},
				}},
			},
		},
		"custom service supplies the serve port when 8000 is taken": {
			custom: &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "serve", Port: 7000}}}},
			mutate: serveTaken,
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "mysvc-serve-svc", Namespace: "ns", Annotations: map[string]string{}, Labels: labels},
				Spec:       corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Name: "serve", Port: 7000}}},
			},
		},
		"no serve port anywhere": {mutate: serveTaken, wantErr: ErrNoServePort},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "mysvc", Namespace: "ns"}}
			rs.Spec.ServeService = tc.custom
			got, err := BuildRayServiceServeService(rs, newCluster(tc.mutate))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildPerClusterServeService(t *testing.T) {
	// spec.serveService does not shape the per-cluster Service.
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "mysvc", Namespace: "default"}}
	rs.Spec.ServeService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "custom"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	got, err := BuildPerClusterServeService(rs, newCluster())
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster-serve-svc", Namespace: "default", OwnerReferences: owner(),
			Labels: map[string]string{"ray.io/originated-from-cr-name": "raycluster", "ray.io/originated-from-crd": "RayService", "ray.io/serve": "raycluster-serve"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"ray.io/cluster": "raycluster", "ray.io/serve": "true"}, Ports: []corev1.ServicePort{{Name: "serve", Port: 8000}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
