package v1

// HeadContainerPort is the port named name that the head's Ray container
// declares, or def when it declares none by that name. It is how KubeRay
// finds the dashboard port (to reach the dashboard and to tell a sidecar
// submitter where it is) and the serve port (for the Serve proxy health
// check and HTTPRoute backends).
func HeadContainerPort(spec *RayClusterSpec, name string, def int32) int32 {
	containers := spec.HeadGroupSpec.Template.Spec.Containers
	if len(containers) <= RayContainerIndex {
		return def
	}
	for _, p := range containers[RayContainerIndex].Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return def
}

// DashboardPort is the head's dashboard port: the Ray container's port named
// "dashboard", else 8265.
func DashboardPort(spec *RayClusterSpec) int32 {
	return HeadContainerPort(spec, DashboardPortName, DefaultDashboardPort)
}

// ServePort is the head's Ray Serve proxy port: the Ray container's port
// named "serve", else 8000.
func ServePort(spec *RayClusterSpec) int32 {
	return HeadContainerPort(spec, ServingPortName, DefaultServingPort)
}
