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

// PortsOf maps port names to numbers for the cluster's Services, as
// KubeRay does: the ports the head's Ray container declares (an unnamed one
// called "<port>-port"); when it declares none, KubeRay's default set
// (client 10001, gcs-server 6379, dashboard 8265, metrics 8080, serve
// 8000). Either way a "metrics" port 8080 is added when none is named so,
// unless another declared port already uses 8080 (KubeRay adds it anyway
// and the API server then rejects the Service for a duplicate port).
// Declared ports are not completed with other defaults: a head that
// declares only gcs-server gets no client, dashboard or serve port.
func PortsOf(cluster *rayv1.RayCluster) map[string]int32 {
	ports := containerPorts(cluster)
	if len(ports) == 0 {
		ports = maps.Clone(standardPorts)
	}
	if _, ok := ports[rayv1.MetricsPortName]; !ok && !slices.Contains(slices.Collect(maps.Values(ports)), rayv1.DefaultMetricsPort) {
		ports[rayv1.MetricsPortName] = rayv1.DefaultMetricsPort
	}
	return ports
}

// standardPorts are the head Service ports of a head that declares none.
var standardPorts = map[string]int32{
	rayv1.ClientPortName:    rayv1.DefaultClientPort,
	rayv1.GcsServerPortName: rayv1.DefaultGcsServerPort,
	rayv1.DashboardPortName: rayv1.DefaultDashboardPort,
	rayv1.MetricsPortName:   rayv1.DefaultMetricsPort,
	rayv1.ServingPortName:   rayv1.DefaultServingPort,
}

// containerPorts are the ports the head's Ray container declares, by name;
// an unnamed port is called "<port>-port".
func containerPorts(cluster *rayv1.RayCluster) map[string]int32 {
	ports := map[string]int32{}
	containers := cluster.Spec.HeadGroupSpec.Template.Spec.Containers
	if len(containers) == 0 {
		return ports
	}
	for _, p := range containers[rayv1.RayContainerIndex].Ports {
		name := p.Name
		if name == "" {
			name = strconv.Itoa(int(p.ContainerPort)) + "-port"
		}
		ports[name] = p.ContainerPort
	}
	return ports
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

// mergePorts puts the operator's ports into a user-provided port list: a
// port of the same name is replaced by the operator's, named ports come out
// sorted by name, and unnamed user ports follow them.
func mergePorts(user, operator []corev1.ServicePort) []corev1.ServicePort {
	byName := map[string]corev1.ServicePort{}
	var unnamed []corev1.ServicePort
	for _, p := range slices.Concat(user, operator) {
		if p.Name == "" {
			unnamed = append(unnamed, p)
			continue
		}
		byName[p.Name] = p
	}
	out := make([]corev1.ServicePort, 0, len(byName)+len(unnamed))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return append(out, unnamed...)
}
