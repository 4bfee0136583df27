package hostaccess

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// hostRootSettings lists, in spec order, the settings of pod that need
// root on the host. allowPrivilegeEscalation and capabilities are not among
// them: they apply inside the pod's user namespace.
func hostRootSettings(pod *corev1.Pod) []string {
	var out []string
	spec := &pod.Spec
	for _, f := range []struct {
		set  bool
		name string
	}{
		{spec.HostNetwork, "spec.hostNetwork: true"},
		{spec.HostPID, "spec.hostPID: true"},
		{spec.HostIPC, "spec.hostIPC: true"},
		{ptr.Deref(spec.HostUsers, false), "spec.hostUsers: true"},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	for _, c := range spec.InitContainers {
		out = appendPrivileged(out, "init container", c.Name, c.SecurityContext)
	}
	for _, c := range spec.Containers {
		out = appendPrivileged(out, "container", c.Name, c.SecurityContext)
	}
	for _, c := range spec.EphemeralContainers {
		out = appendPrivileged(out, "ephemeral container", c.Name, c.SecurityContext)
	}
	return out
}

// appendPrivileged names a privileged container.
func appendPrivileged(out []string, kind, name string, sc *corev1.SecurityContext) []string {
	if sc == nil || !ptr.Deref(sc.Privileged, false) {
		return out
	}
	return append(out, fmt.Sprintf("%s %q sets securityContext.privileged: true", kind, name))
}
