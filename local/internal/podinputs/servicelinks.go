package podinputs

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// envVar is one variable of a container's environment.
type envVar struct{ name, value string }

// serviceLinks are the service link variables of a pod: those of the
// kubernetes Service in every namespace, and, when the pod enables service
// links (the default), those of every Service of its namespace that has a
// ClusterIP.
func serviceLinks(ctx context.Context, objs Objects, pod *corev1.Pod, facts PodFacts) ([]envVar, error) {
	var out []envVar
	if ks := facts.KubernetesService; ks.IsValid() {
		out = serviceVars("kubernetes", ks.Addr().String(),
			[]corev1.ServicePort{{Name: "https", Port: int32(ks.Port()), Protocol: corev1.ProtocolTCP}})
	}
	if pod.Spec.EnableServiceLinks != nil && !*pod.Spec.EnableServiceLinks {
		return out, nil
	}
	services, err := objs.Services(ctx, pod.Namespace)
	if err != nil {
		return nil, &ConfigError{Reason: ReasonCreateContainerConfigError, Err: err,
			Message: fmt.Sprintf("failed to list services of namespace %q for service links: %v", pod.Namespace, err)}
	}
	sort.Slice(services, func(i, j int) bool { return services[i].Name < services[j].Name })
	for _, svc := range services {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			continue
		}
		if svc.Namespace == "default" && svc.Name == "kubernetes" && facts.KubernetesService.IsValid() {
			continue // already given, from the facts
		}
		out = append(out, serviceVars(svc.Name, ip, svc.Spec.Ports)...)
	}
	return out, nil
}

// serviceVars are the variables of one Service: <NAME>_SERVICE_HOST and
// _SERVICE_PORT[_<PORTNAME>], and the Docker-link style <NAME>_PORT and
// <NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR].
func serviceVars(service, ip string, ports []corev1.ServicePort) []envVar {
	prefix := envName(service)
	out := []envVar{{prefix + "_SERVICE_HOST", ip}}
	if len(ports) == 0 {
		return out
	}
	out = append(out, envVar{prefix + "_SERVICE_PORT", strconv.Itoa(int(ports[0].Port))})
	for _, p := range ports {
		if p.Name != "" {
			out = append(out, envVar{prefix + "_SERVICE_PORT_" + envName(p.Name), strconv.Itoa(int(p.Port))})
		}
	}
	for i, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		port := strconv.Itoa(int(p.Port))
		url := strings.ToLower(string(proto)) + "://" + net.JoinHostPort(ip, port)
		if i == 0 {
			out = append(out, envVar{prefix + "_PORT", url})
		}
		base := prefix + "_PORT_" + port + "_" + strings.ToUpper(string(proto))
		out = append(out,
			envVar{base, url},
			envVar{base + "_PROTO", strings.ToLower(string(proto))},
			envVar{base + "_PORT", port},
			envVar{base + "_ADDR", ip})
	}
	return out
}

func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
