package v1_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestHeadContainerPorts(t *testing.T) {
	withPorts := func(ports ...corev1.ContainerPort) *rayv1.RayClusterSpec {
		spec := &rayv1.RayClusterSpec{}
		spec.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{Name: "ray-head", Ports: ports}, {Name: "side", Ports: []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 1}}}}
		return spec
	}
	tests := map[string]struct {
		spec                     *rayv1.RayClusterSpec
		wantDashboard, wantServe int32
	}{
		"no containers": {spec: &rayv1.RayClusterSpec{}, wantDashboard: 8265, wantServe: 8000},
		"no ports":      {spec: withPorts(), wantDashboard: 8265, wantServe: 8000},
		"named ports": {
			spec:          withPorts(corev1.ContainerPort{Name: "dashboard", ContainerPort: 9265}, corev1.ContainerPort{Name: "serve", ContainerPort: 9000}),
			wantDashboard: 9265, wantServe: 9000,
		},
		"other names only; the sidecar's ports do not count": {
			spec:          withPorts(corev1.ContainerPort{Name: "http", ContainerPort: 8265}),
			wantDashboard: 8265, wantServe: 8000,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := rayv1.DashboardPort(tc.spec); got != tc.wantDashboard {
				t.Errorf("DashboardPort = %d, want %d", got, tc.wantDashboard)
			}
			if got := rayv1.ServePort(tc.spec); got != tc.wantServe {
				t.Errorf("ServePort = %d, want %d", got, tc.wantServe)
			}
		})
	}
}
