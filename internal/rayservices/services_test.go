package rayservices

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func newCluster(mutators ...func(*rayv1.RayCluster)) *rayv1.RayCluster {
	c := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster", Namespace: "default", UID: "uid-1"},
		Spec: rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Image: "ray"}}}},
		}},
	}
	for _, m := range mutators {
		m(c)
	}
	return c
}

func owner() []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster", UID: "uid-1",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
}

func headLabels() map[string]string {
	return map[string]string{
		"ray.io/cluster": "raycluster", "ray.io/node-type": "head", "ray.io/identifier": "raycluster-head",
		"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator",
	}
}

func tcpPort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, AppProtocol: ptr.To("tcp")}
}

func defaultPorts() []corev1.ServicePort {
	return []corev1.ServicePort{
		tcpPort("client", 10001), tcpPort("dashboard", 8265), tcpPort("gcs-server", 6379),
		tcpPort("metrics", 8080), tcpPort("serve", 8000),
	}
}

func TestBuildHeadService(t *testing.T) {
	tests := map[string]struct {
		mutate func(*rayv1.RayCluster)
		opts   HeadServiceOptions
		want   *corev1.Service
	}{
		"defaults: headless with KubeRay's default ports": {
			mutate: func(*rayv1.RayCluster) {},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "raycluster-head-svc", Namespace: "default", Labels: headLabels(), Annotations: map[string]string{}, OwnerReferences: owner()},
				Spec:       corev1.ServiceSpec{Selector: headLabels(), Ports: defaultPorts(), ClusterIP: "None", PublishNotReadyAddresses: true},
			},
		},
		"cluster IP knob keeps a normal service": {
			mutate: func(*rayv1.RayCluster) {},
			opts:   HeadServiceOptions{ClusterIP: true},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "raycluster-head-svc", Namespace: "default", Labels: headLabels(), Annotations: map[string]string{}, OwnerReferences: owner()},
				Spec:       corev1.ServiceSpec{Selector: headLabels(), Ports: defaultPorts()},
			},
		},
		"declared ports only (unnamed one named <port>-port) plus metrics, NodePort, annotations": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.ServiceType = corev1.ServiceTypeNodePort
				c.Spec.HeadServiceAnnotations = map[string]string{"a": "1"}
				c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{
					{Name: "gcs-server", ContainerPort: 6380}, {ContainerPort: 9999},
				}
			},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "raycluster-head-svc", Namespace: "default", Labels: headLabels(), Annotations: map[string]string{"a": "1"}, OwnerReferences: owner()},
				Spec: corev1.ServiceSpec{Selector: headLabels(), Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{
					tcpPort("9999-port", 9999), tcpPort("gcs-server", 6380), tcpPort("metrics", 8080),
				}},
			},
		},
		"metrics is not added when a declared port already uses 8080": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{
					{Name: "prom", ContainerPort: 8080}, {Name: "dash", ContainerPort: 8265},
				}
			},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "raycluster-head-svc", Namespace: "default", Labels: headLabels(), Annotations: map[string]string{}, OwnerReferences: owner()},
				Spec: corev1.ServiceSpec{Selector: headLabels(), ClusterIP: "None", PublishNotReadyAddresses: true, Ports: []corev1.ServicePort{
					tcpPort("dash", 8265), tcpPort("prom", 8080),
				}},
			},
		},
		"app name label follows the head template": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.Template.Labels = map[string]string{"app.kubernetes.io/name": "myapp"}
			},
			want: func() *corev1.Service {
				l := headLabels()
				l["app.kubernetes.io/name"] = "myapp"
				return &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: "raycluster-head-svc", Namespace: "default", Labels: l, Annotations: map[string]string{}, OwnerReferences: owner()},
					Spec:       corev1.ServiceSpec{Selector: l, Ports: defaultPorts(), ClusterIP: "None", PublishNotReadyAddresses: true},
				}
			}(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := BuildHeadService(newCluster(tc.mutate), tc.opts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildHeadServiceCustom covers seed 004 §2.1.4/§2.1.5: a user headService
// is merged, not replaced.
func TestBuildHeadServiceCustom(t *testing.T) {
	userLabels := func() map[string]string {
		return map[string]string{"team": "ml", "ray.io/cluster": "spoof"}
	}
	tests := map[string]struct {
		custom *corev1.Service
		want   *corev1.Service
	}{
		"named, typed, foreign namespace, own selector; ports merged by name, sorted, unnamed last": {
			custom: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "my-head", Namespace: "elsewhere", Labels: userLabels(), Annotations: map[string]string{"a": "user", "b": "user"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"x": "y"},
					Ports: []corev1.ServicePort{{Port: 5555}, {Name: "extra", Port: 1234}, {Name: "dashboard", Port: 9999}}},
			},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "my-head", Namespace: "default", OwnerReferences: owner(),
					Labels:      func() map[string]string { l := headLabels(); l["team"] = "ml"; return l }(),
					Annotations: map[string]string{"a": "operator", "b": "user"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: headLabels(),
					Ports: []corev1.ServicePort{
						tcpPort("client", 10001), tcpPort("dashboard", 8265), {Name: "extra", Port: 1234},
						tcpPort("gcs-server", 6379), tcpPort("metrics", 8080), tcpPort("serve", 8000), {Port: 5555},
					}},
			},
		},
		"unnamed, untyped: name and type default, not headless": {
			custom: &corev1.Service{},
			want: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "raycluster-head-svc", Namespace: "default", OwnerReferences: owner(),
					Labels: headLabels(), Annotations: map[string]string{"a": "operator"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: headLabels(), Ports: defaultPorts()},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.HeadService = tc.custom
				c.Spec.HeadGroupSpec.ServiceType = corev1.ServiceTypeClusterIP
				c.Spec.HeadServiceAnnotations = map[string]string{"a": "operator"}
			})
			before := tc.custom.DeepCopy()
			got := BuildHeadService(c, HeadServiceOptions{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, c.Spec.HeadGroupSpec.HeadService); diff != "" {
				t.Errorf("user headService mutated (-before +after):\n%s", diff)
			}
		})
	}
}

func TestBuildHeadlessService(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{GroupName: "a", NumOfHosts: 1}, {GroupName: "tpu", NumOfHosts: 4}}
	})
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster-headless", Namespace: "default", OwnerReferences: owner(),
			Labels: map[string]string{"ray.io/headless-worker-svc": "raycluster"}},
		Spec: corev1.ServiceSpec{ClusterIP: "None", Type: corev1.ServiceTypeClusterIP, PublishNotReadyAddresses: true,
			Selector: map[string]string{"ray.io/cluster": "raycluster", "ray.io/node-type": "worker"}},
	}
	if diff := cmp.Diff(want, BuildHeadlessService(c)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	needs := []bool{NeedsHeadlessService(c), NeedsHeadlessService(newCluster())}
	if diff := cmp.Diff([]bool{true, false}, needs); diff != "" {
		t.Errorf("NeedsHeadlessService multi-host, none (-want +got):\n%s", diff)
	}
}

func TestBuildOwnerHeadService(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Spec.HeadServiceAnnotations = map[string]string{"ignored": "yes"}
		c.Spec.HeadGroupSpec.Template.Labels = map[string]string{"app.kubernetes.io/name": "ignored"}
	})
	got := BuildOwnerHeadService(c, "mysvc", "default", "RayService", HeadServiceOptions{})
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "mysvc-head-svc", Namespace: "default", Annotations: map[string]string{},
			Labels: map[string]string{"ray.io/originated-from-cr-name": "mysvc", "ray.io/originated-from-crd": "RayService",
				"ray.io/node-type": "head", "ray.io/identifier": "mysvc-head"}},
		Spec: corev1.ServiceSpec{Selector: headLabels(), Ports: defaultPorts(), ClusterIP: "None", PublishNotReadyAddresses: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
