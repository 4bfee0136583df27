package podworker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// Every securityContext setting is honoured as a kubelet with runc honours
// it, or refused: the pod at admission (sysctlRefusal, apparmorRefusal,
// selinuxRefusal, windowsRefusal), or a container at its start, waiting
// with the kubelet's reason (applySecurityContext).

// Reasons of the node's refusals of securityContext settings; the first
// two are the kubelet's.
const (
	reasonSysctlForbidden     = "SysctlForbidden"
	reasonAppArmor            = "AppArmor"
	reasonSELinux             = "SELinuxNotSupported"
	reasonWindowsOptions      = "WindowsOptionsNotSupported"
	reasonCreateContainerFail = "CreateContainerError"
)

// securityRefusal is the node's refusal of pod's securityContext settings:
// a reason and message, or "" when it runs them.
func securityRefusal(pod *corev1.Pod) (reason, message string) {
	for _, check := range []func(*corev1.Pod) (string, string){sysctlRefusal, apparmorRefusal, selinuxRefusal, windowsRefusal} {
		if reason, message = check(pod); reason != "" {
			return reason, message
		}
	}
	return "", ""
}

// safeSysctls are the sysctls a kubelet allows without
// --allowed-unsafe-sysctls, which the local node has not: namespaced ones
// that affect nothing outside the pod. The value says which namespace.
var safeSysctls = map[string]string{
	"kernel.shm_rmid_forced":              "ipc",
	"net.ipv4.ip_local_port_range":        "net",
	"net.ipv4.tcp_syncookies":             "net",
	"net.ipv4.ping_group_range":           "net",
	"net.ipv4.ip_unprivileged_port_start": "net",
	"net.ipv4.ip_local_reserved_ports":    "net",
	"net.ipv4.tcp_keepalive_time":         "net",
	"net.ipv4.tcp_fin_timeout":            "net",
	"net.ipv4.tcp_keepalive_intvl":        "net",
	"net.ipv4.tcp_keepalive_probes":       "net",
	"net.ipv4.tcp_rmem":                   "net",
	"net.ipv4.tcp_wmem":                   "net",
}

// sysctlRefusal refuses a sysctl that is not safe, or whose namespace the
// pod shares with the host, with the kubelet's reason and message.
func sysctlRefusal(pod *corev1.Pod) (string, string) {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return "", ""
	}
	for _, s := range sc.Sysctls {
		name := dottedSysctl(s.Name)
		ns, ok := safeSysctls[name]
		switch {
		case !ok:
			return reasonSysctlForbidden, fmt.Sprintf("forbidden sysctl: %q not allowlisted", name)
		case ns == "net" && pod.Spec.HostNetwork, ns == "ipc" && pod.Spec.HostIPC:
			return reasonSysctlForbidden, fmt.Sprintf("forbidden sysctl: %q not allowed with host %s enabled", name, ns)
		}
	}
	return "", ""
}

// dottedSysctl writes a sysctl name with dots: Kubernetes also takes
// slashes as separators (net/ipv4/conf/eth0.100/forwarding), in which case
// a dot is part of a name.
func dottedSysctl(name string) string {
	if i := strings.IndexAny(name, "./"); i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '/':
			return '.'
		case '.':
			return '/'
		}
		return r
	}, name)
}

// podSysctls are the pod's (admitted) sysctls, by dotted name.
func podSysctls(pod *corev1.Pod) map[string]string {
	sc := pod.Spec.SecurityContext
	if sc == nil || len(sc.Sysctls) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, s := range sc.Sysctls {
		out[dottedSysctl(s.Name)] = s.Value
	}
	return out
}

// appArmorAnnotationPrefix is the older form of a container's AppArmor
// profile, which the API server still accepts.
const appArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/"

// apparmorRefusal refuses a pod that asks for an AppArmor profile (other
// than unconfined), as a kubelet on a host without AppArmor does: the node
// applies none.
func apparmorRefusal(pod *corev1.Pod) (string, string) {
	confined := func(p *corev1.AppArmorProfile) bool {
		return p != nil && p.Type != corev1.AppArmorProfileTypeUnconfined
	}
	asks := pod.Spec.SecurityContext != nil && confined(pod.Spec.SecurityContext.AppArmorProfile)
	forEachContainer(pod, func(_ string, _ string, sc *corev1.SecurityContext) {
		asks = asks || (sc != nil && confined(sc.AppArmorProfile))
	})
	for key, value := range pod.Annotations {
		asks = asks || (strings.HasPrefix(key, appArmorAnnotationPrefix) && value != "unconfined")
	}
	if !asks {
		return "", ""
	}
	why := "AppArmor is not enabled on the host"
	if enabled, err := os.ReadFile("/sys/module/apparmor/parameters/enabled"); err == nil && strings.TrimSpace(string(enabled)) == "Y" {
		why = "the local node does not apply AppArmor profiles"
	}
	return reasonAppArmor, "Cannot enforce AppArmor: " + why
}

// selinuxRefusal refuses seLinuxOptions: the node labels nothing.
func selinuxRefusal(pod *corev1.Pod) (string, string) {
	var where []string
	if sc := pod.Spec.SecurityContext; sc != nil && sc.SELinuxOptions != nil {
		where = append(where, "pod")
	}
	forEachContainer(pod, func(kind, name string, sc *corev1.SecurityContext) {
		if sc != nil && sc.SELinuxOptions != nil {
			where = append(where, fmt.Sprintf("%s %q", kind, name))
		}
	})
	if len(where) == 0 {
		return "", ""
	}
	return reasonSELinux, strings.Join(where, ", ") +
		" sets securityContext.seLinuxOptions: SELinux is not enabled on the node, which cannot label the pod's processes and files"
}

// windowsRefusal refuses windowsOptions: the node runs Linux processes.
func windowsRefusal(pod *corev1.Pod) (string, string) {
	var where []string
	if sc := pod.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		where = append(where, "pod")
	}
	forEachContainer(pod, func(kind, name string, sc *corev1.SecurityContext) {
		if sc != nil && sc.WindowsOptions != nil {
			where = append(where, fmt.Sprintf("%s %q", kind, name))
		}
	})
	if len(where) == 0 {
		return "", ""
	}
	return reasonWindowsOptions, strings.Join(where, ", ") + " sets securityContext.windowsOptions: the node runs Linux containers"
}

// forEachContainer calls f with the kind, name and securityContext of every
// container of pod.
func forEachContainer(pod *corev1.Pod, f func(kind, name string, sc *corev1.SecurityContext)) {
	for i := range pod.Spec.InitContainers {
		f("init container", pod.Spec.InitContainers[i].Name, pod.Spec.InitContainers[i].SecurityContext)
	}
	for i := range pod.Spec.Containers {
		f("container", pod.Spec.Containers[i].Name, pod.Spec.Containers[i].SecurityContext)
	}
	for i := range pod.Spec.EphemeralContainers {
		f("ephemeral container", pod.Spec.EphemeralContainers[i].Name, pod.Spec.EphemeralContainers[i].SecurityContext)
	}
}

// applySecurityContext sets in spec what the pod's and c's
// securityContexts decide (c's settings override the pod's), or returns
// why c may not start, with the kubelet's reason and message.
func applySecurityContext(spec *sandbox.ContainerSpec, pod *corev1.Pod, c *corev1.Container, img Image, seccompDir string) *waitingError {
	psc := ptr.Deref(pod.Spec.SecurityContext, corev1.PodSecurityContext{})
	csc := ptr.Deref(c.SecurityContext, corev1.SecurityContext{})
	runAsUser := firstSet(csc.RunAsUser, psc.RunAsUser)
	if ptr.Deref(firstSet(csc.RunAsNonRoot, psc.RunAsNonRoot), false) {
		if msg := nonRootViolation(pod, c.Name, runAsUser, img); msg != "" {
			return &waitingError{Reason: reasonConfigError, Message: msg}
		}
	}
	spec.UID = uint32(ptr.Deref(runAsUser, img.UID)) //nolint:gosec // the API server validates ids
	gid, imageGroups := imageUser(img, spec.UID)
	if runAsUser == nil && img.GID != nil {
		gid = uint32(*img.GID) //nolint:gosec // an image's USER group, parsed as a number
	}
	if g := firstSet(csc.RunAsGroup, psc.RunAsGroup); g != nil {
		gid = uint32(*g) //nolint:gosec // the API server validates ids
	}
	spec.GID = gid
	spec.AdditionalGIDs = supplementaryGroups(psc, imageGroups, gid)
	spec.Privileged = ptr.Deref(csc.Privileged, false)
	if caps := csc.Capabilities; caps != nil {
		spec.CapAdd, spec.CapDrop = capNames(caps.Add), capNames(caps.Drop)
	}
	spec.ReadOnlyRoot = ptr.Deref(csc.ReadOnlyRootFilesystem, false)
	// As a kubelet: no_new_privs only when asked (allowPrivilegeEscalation:
	// false); unset, privileges may be gained.
	spec.NoNewPrivileges = !ptr.Deref(csc.AllowPrivilegeEscalation, true)
	spec.UnmaskedProc = ptr.Deref(csc.ProcMount, corev1.DefaultProcMount) == corev1.UnmaskedProcMount
	spec.Sysctls = podSysctls(pod)
	seccomp, err := seccompFor(firstSet(csc.SeccompProfile, psc.SeccompProfile), spec.Privileged, seccompDir)
	if err != nil {
		return &waitingError{Reason: reasonCreateContainerFail, Message: err.Error()}
	}
	spec.Seccomp = seccomp
	return nil
}

// imageUser is what the image's /etc/passwd and /etc/group say of uid:
// those of a registry image's root, else the base root's.
func imageUser(img Image, uid uint32) (gid uint32, groups []uint32) {
	if img.RootFS != "" {
		return podinputs.RootFSUser(img.RootFS, uid)
	}
	return sandbox.ImageUser(uid)
}

// firstSet is the first of the pointers that is set, nil if none is.
func firstSet[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// nonRootViolation is the kubelet's message for a container that has
// runAsNonRoot but would run as root, "" when it would not.
func nonRootViolation(pod *corev1.Pod, container string, runAsUser *int64, img Image) string {
	podRef := fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
	switch {
	case runAsUser != nil && *runAsUser == 0:
		return fmt.Sprintf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", podRef, container)
	case runAsUser == nil && img.UID == 0:
		return fmt.Sprintf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podRef, container)
	}
	return ""
}

// supplementaryGroups are the process's groups besides gid: with the
// default policy (Merge) those the image's /etc/group gives its user, then
// supplementalGroups and fsGroup, each once.
func supplementaryGroups(psc corev1.PodSecurityContext, imageGroups []uint32, gid uint32) []uint32 {
	var out []uint32
	add := func(g uint32) {
		if g != gid && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	if ptr.Deref(psc.SupplementalGroupsPolicy, corev1.SupplementalGroupsPolicyMerge) == corev1.SupplementalGroupsPolicyMerge {
		for _, g := range imageGroups {
			add(g)
		}
	}
	for _, g := range psc.SupplementalGroups {
		add(uint32(g)) //nolint:gosec // the API server validates ids
	}
	if psc.FSGroup != nil {
		add(uint32(*psc.FSGroup)) //nolint:gosec // the API server validates ids
	}
	return out
}

// seccompFor is the container's seccomp filter. A privileged container
// runs unconfined, as under containerd; a Localhost profile is read from
// the node's seccomp directory, as a kubelet reads <root-dir>/seccomp.
func seccompFor(p *corev1.SeccompProfile, privileged bool, dir string) (sandbox.Seccomp, error) {
	if p == nil || privileged {
		return sandbox.Seccomp{}, nil
	}
	switch p.Type {
	case corev1.SeccompProfileTypeUnconfined:
		return sandbox.Seccomp{}, nil
	case corev1.SeccompProfileTypeRuntimeDefault:
		return sandbox.Seccomp{Type: sandbox.SeccompRuntimeDefault}, nil
	case corev1.SeccompProfileTypeLocalhost:
		return localhostSeccomp(ptr.Deref(p.LocalhostProfile, ""), dir)
	}
	return sandbox.Seccomp{}, fmt.Errorf("unknown seccomp profile type %q", p.Type)
}

func localhostSeccomp(name, dir string) (sandbox.Seccomp, error) {
	if dir == "" {
		return sandbox.Seccomp{}, fmt.Errorf("cannot load seccomp profile %q: the node has no seccomp profile directory", name)
	}
	if !filepath.IsLocal(name) {
		return sandbox.Seccomp{}, fmt.Errorf("cannot load seccomp profile %q: not a path inside the node's seccomp profile directory %s", name, dir)
	}
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if err == nil && len(data) == 0 {
		err = errors.New("the file is empty")
	}
	if err != nil {
		return sandbox.Seccomp{}, fmt.Errorf("cannot load seccomp profile %q: %w", path, err)
	}
	profile, err := sandbox.ParseSeccompProfile(data)
	if err != nil {
		return sandbox.Seccomp{}, fmt.Errorf("cannot load seccomp profile %q: %w", path, err)
	}
	return sandbox.Seccomp{Type: sandbox.SeccompLocalhost, Profile: profile}, nil
}
