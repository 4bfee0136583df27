// Package rayservices builds the Kubernetes Services of a RayCluster as
// KubeRay does: the head Service, the headless Service of multi-host worker
// groups and the Ray Serve Service.
package rayservices

import (
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// appProtocolTCP is the appProtocol of every head Service port.
const appProtocolTCP = "tcp"

// PortsOf maps port names to numbers for the cluster's Services: the ports
// the head's Ray container declares (unnamed ones called "<port>-port"), or
// KubeRay's defaults when it declares none, plus metrics (8080) unless a
// port is already named "metrics".
func PortsOf(cluster *rayv1.RayCluster) map[string]int32 {
	ports := map[string]int32{}
	containers := cluster.Spec.HeadGroupSpec.Template.Spec.Containers
	if len(containers) > 0 {
		for _, p := range containers[rayv1.RayContainerIndex].Ports {
			name := p.Name
			if name == "" {
				name = strconv.Itoa(int(p.ContainerPort)) + "-port"
			}
			ports[name] = p.ContainerPort
		}
	}
	if len(ports) == 0 {
		ports = map[string]int32{
			rayv1.ClientPortName:    rayv1.DefaultClientPort,
			rayv1.GcsServerPortName: rayv1.DefaultGcsServerPort,
			rayv1.DashboardPortName: rayv1.DefaultDashboardPort,
			rayv1.MetricsPortName:   rayv1.DefaultMetricsPort,
			rayv1.ServingPortName:   rayv1.DefaultServingPort,
		}
	}
	if _, ok := ports[rayv1.MetricsPortName]; !ok {
		ports[rayv1.MetricsPortName] = rayv1.DefaultMetricsPort
	}
	return ports
}

// DashboardPort is the port of the "dashboard" Service port, or 8265.
func DashboardPort(cluster *rayv1.RayCluster) int32 {
	if p, ok := PortsOf(cluster)[rayv1.DashboardPortName]; ok {
		return p
	}
	return rayv1.DefaultDashboardPort
}

// headServicePorts lists the ports sorted by name, all with appProtocol tcp;
// sorting keeps the Service stable from one reconcile to the next.
func headServicePorts(ports map[string]int32) []corev1.ServicePort {
	out := make([]corev1.ServicePort, 0, len(ports))
	for _, name := range slices.Sorted(maps.Keys(ports)) {
		out = append(out, corev1.ServicePort{Name: name, Port: ports[name], AppProtocol: new(appProtocolTCP)})
	}
	return out
}
