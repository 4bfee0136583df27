package podinputs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// fieldValue is the value of a fieldRef's fieldPath for pod, as env and
// downwardAPI volumes give it.
func fieldValue(pod *corev1.Pod, facts PodFacts, fieldPath string) (string, error) {
	if v, ok, err := subscriptedField(pod, fieldPath); ok {
		return v, err
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		if pod.Spec.NodeName != "" {
			return pod.Spec.NodeName, nil
		}
		return facts.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return podIP(pod, facts, fieldPath == "status.podIPs"), nil
	case "status.hostIP", "status.hostIPs":
		return hostIP(pod, facts, fieldPath == "status.hostIPs"), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %s", fieldPath)
}

// subscriptedField handles metadata.labels['key'] and
// metadata.annotations['key']; ok is false for any other path.
func subscriptedField(pod *corev1.Pod, fieldPath string) (value string, ok bool, err error) {
	for prefix, m := range map[string]map[string]string{
		"metadata.labels[": pod.Labels, "metadata.annotations[": pod.Annotations,
	} {
		rest, found := strings.CutPrefix(fieldPath, prefix)
		if !found {
			continue
		}
		if len(rest) < 4 || !strings.HasPrefix(rest, "'") || !strings.HasSuffix(rest, "']") {
			return "", true, fmt.Errorf("invalid fieldPath: %s", fieldPath)
		}
		return m[rest[1:len(rest)-2]], true, nil
	}
	return "", false, nil
}

// formatMap writes a map one key="quoted value" per line, sorted by key, as
// downwardAPI volumes show labels and annotations.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + strconv.Quote(m[k])
	}
	return strings.Join(lines, "\n")
}

func podIP(pod *corev1.Pod, facts PodFacts, all bool) string {
	if facts.PodIP.IsValid() {
		return facts.PodIP.String()
	}
	if !all {
		return pod.Status.PodIP
	}
	ips := make([]string, len(pod.Status.PodIPs))
	for i, ip := range pod.Status.PodIPs {
		ips[i] = ip.IP
	}
	return strings.Join(ips, ",")
}

func hostIP(pod *corev1.Pod, facts PodFacts, all bool) string {
	if facts.HostIP.IsValid() {
		return facts.HostIP.String()
	}
	if !all {
		return pod.Status.HostIP
	}
	ips := make([]string, len(pod.Status.HostIPs))
	for i, ip := range pod.Status.HostIPs {
		ips[i] = ip.IP
	}
	return strings.Join(ips, ",")
}

// resourceValue is the value of a resourceFieldRef: the container's request
// or limit divided by the divisor, rounded up. A limit the container does
// not set is the node's allocatable amount. c is the container the
// reference belongs to; ref.ContainerName, when set, names another one.
func resourceValue(pod *corev1.Pod, c *corev1.Container, ref *corev1.ResourceFieldSelector, alloc corev1.ResourceList) (string, error) {
	if ref.ContainerName != "" {
		found := FindContainer(pod, ref.ContainerName)
		if found == nil {
			return "", fmt.Errorf("container %s not found in pod %s/%s", ref.ContainerName, pod.Namespace, pod.Name)
		}
		c = found
	}
	kind, name, _ := strings.Cut(ref.Resource, ".")
	rn := corev1.ResourceName(name)
	if !supportedResource(rn) || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
	}
	q := c.Resources.Requests[rn]
	if kind == "limits" {
		limit, set := c.Resources.Limits[rn]
		if !set {
			limit = alloc[rn]
		}
		q = limit
	}
	return strconv.FormatInt(divideUp(q, ref.Divisor, rn == corev1.ResourceCPU), 10), nil
}

func supportedResource(rn corev1.ResourceName) bool {
	switch rn {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	return strings.HasPrefix(string(rn), corev1.ResourceHugePagesPrefix)
}

// divideUp divides q by divisor (1 when zero) and rounds up; CPU divides in
// millicores so that 500m with divisor 1 gives 1.
func divideUp(q, divisor resource.Quantity, cpu bool) int64 {
	a, b := q.Value(), divisor.Value()
	if cpu {
		a, b = q.MilliValue(), divisor.MilliValue()
	}
	if divisor.IsZero() || b <= 0 {
		b = 1
		if cpu {
			b = 1000
		}
	}
	return (a + b - 1) / b
}

// FindContainer returns the container or init container of pod named name,
// or nil.
func FindContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
