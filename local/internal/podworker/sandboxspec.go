package podworker

import (
	"bufio"
	"bytes"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// sandboxSpecFor describes the sandbox of pod on this node; hostUsers is
// the node's admission verdict (a pod admitted with host privileges).
func sandboxSpecFor(pod *corev1.Pod, node NodeInfo, limits Limits, hostUsers bool) sandbox.SandboxSpec {
	hostname := pod.Spec.Hostname
	if hostname == "" {
		hostname = pod.Name
	}
	return sandbox.SandboxSpec{
		UID:           string(pod.UID),
		Namespace:     pod.Namespace,
		Name:          pod.Name,
		Hostname:      hostname,
		Subdomain:     pod.Spec.Subdomain,
		ClusterDomain: node.ClusterDomain,
		ShmSizeBytes:  shmSize(pod, node.Allocatable),
		DNS:           podDNS(pod, node),
		HostAliases:   hostEntries(pod.Spec.HostAliases),
		HostNetwork:   pod.Spec.HostNetwork,
		HostUsers:     hostUsers,
		PidsLimit:     limits.PodPids,
		CPUShares:     podCPUShares(pod),
	}
}

// podCPUShares is the pod cgroup's cpu.shares: from its CPU requests as a
// kubelet sums them (containers and sidecars, or the largest init
// container's if more).
func podCPUShares(pod *corev1.Pod) uint64 {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return cpuShares(requests.Cpu().MilliValue())
}

// cpuShares is the cgroup cpu.shares of a CPU request in thousandths of a
// CPU, as a kubelet converts it: 1024 a CPU, at least 2 (no request), at
// most 262144. Siblings share the CPUs in proportion to their shares.
func cpuShares(milli int64) uint64 {
	const minShares, maxShares = 2, 262144
	return uint64(min(max(milli*1024/1000, minShares), maxShares)) //nolint:gosec // clamped to [2, 262144]
}

// hostEntries are the pod's hostAliases as /etc/hosts entries.
func hostEntries(aliases []corev1.HostAlias) []sandbox.HostEntry {
	var out []sandbox.HostEntry
	for _, a := range aliases {
		out = append(out, sandbox.HostEntry{IP: a.IP, Hostnames: a.Hostnames})
	}
	return out
}

// shmSize is the size of a Memory emptyDir mounted at /dev/shm (see
// podinputs.MemoryVolumeSize), 0 if none (the sandbox's default).
func shmSize(pod *corev1.Pod, nodeAllocatable corev1.ResourceList) int64 {
	shm := map[string]bool{}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/dev/shm" {
				shm[m.Name] = true
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		if ed := v.EmptyDir; shm[v.Name] && ed != nil && ed.Medium == corev1.StorageMediumMemory {
			return podinputs.MemoryVolumeSize(pod, ed, nodeAllocatable)
		}
	}
	return 0
}

// podDNS is the pod's resolv.conf per its dnsPolicy and dnsConfig.
func podDNS(pod *corev1.Pod, node NodeInfo) sandbox.DNSConfig {
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	if policy == corev1.DNSClusterFirst && pod.Spec.HostNetwork {
		policy = corev1.DNSDefault
	}
	var cfg sandbox.DNSConfig
	switch policy {
	case corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
		d := node.ClusterDomain
		cfg = sandbox.DNSConfig{
			Nameservers: append([]string(nil), node.ClusterDNS...),
			Searches:    []string{pod.Namespace + ".svc." + d, "svc." + d, d},
			Options:     []string{"ndots:5"},
		}
	case corev1.DNSDefault:
		cfg = hostResolvConf()
	}
	if pc := pod.Spec.DNSConfig; pc != nil {
		cfg.Nameservers = append(cfg.Nameservers, pc.Nameservers...)
		cfg.Searches = append(cfg.Searches, pc.Searches...)
		cfg.Options = mergeDNSOptions(cfg.Options, pc.Options)
	}
	return cfg
}

// mergeDNSOptions overrides options of the same name, as a kubelet does.
func mergeDNSOptions(base []string, extra []corev1.PodDNSConfigOption) []string {
	out := append([]string(nil), base...)
	for _, o := range extra {
		opt := o.Name
		if o.Value != nil {
			opt += ":" + *o.Value
		}
		replaced := false
		for i, b := range out {
			if strings.SplitN(b, ":", 2)[0] == o.Name {
				out[i], replaced = opt, true
			}
		}
		if !replaced {
			out = append(out, opt)
		}
	}
	return out
}

// hostResolvConf reads the host's /etc/resolv.conf (dnsPolicy Default).
func hostResolvConf() sandbox.DNSConfig {
	data, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return sandbox.DNSConfig{}
	}
	return parseResolvConf(data)
}

// parseResolvConf reads nameserver, search and options lines.
func parseResolvConf(data []byte) sandbox.DNSConfig {
	var cfg sandbox.DNSConfig
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			cfg.Nameservers = append(cfg.Nameservers, f[1])
		case "search":
			cfg.Searches = f[1:]
		case "options":
			cfg.Options = append(cfg.Options, f[1:]...)
		}
	}
	return cfg
}
