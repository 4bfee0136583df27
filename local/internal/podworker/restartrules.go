package podworker

import corev1 "k8s.io/api/core/v1"

// Container-level restart policy and rules (Kubernetes ContainerRestartRules,
// beta and on by default since 1.35), decided as the kubelet of 1.36 does.

// containerShouldRestart tells whether container, which exited with code,
// restarts: its restartPolicyRules first, in order, the first matching rule
// with action Restart deciding; then its own restartPolicy; then the pod's.
// Rules are only read when the container has a restartPolicy (the API
// requires one with them). RestartAllContainers (gate
// RestartAllContainersOnContainerExits, off) falls back to the policies.
func containerShouldRestart(container *corev1.Container, pod *corev1.PodSpec, code int32) bool {
	if container.RestartPolicy != nil {
		if rule, ok := matchingRestartRule(container, code); ok && rule.Action == corev1.ContainerRestartRuleActionRestart {
			return true
		}
		switch *container.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return code != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch pod.RestartPolicy {
	case corev1.RestartPolicyOnFailure:
		return code != 0
	case corev1.RestartPolicyNever:
		return false
	default: // Always, and unset (the default is Always)
		return true
	}
}

// matchingRestartRule returns the first of container's restartPolicyRules
// whose exitCodes requirement code meets (operator In: listed, NotIn: not
// listed). A rule without exitCodes or with another operator never matches.
func matchingRestartRule(container *corev1.Container, code int32) (corev1.ContainerRestartRule, bool) {
	for _, rule := range container.RestartPolicyRules {
		if rule.ExitCodes == nil {
			continue
		}
		listed := false
		for _, v := range rule.ExitCodes.Values {
			listed = listed || v == code
		}
		switch rule.ExitCodes.Operator {
		case corev1.ContainerRestartRuleOnExitCodesOpIn:
			if listed {
				return rule, true
			}
		case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !listed {
				return rule, true
			}
		}
	}
	return corev1.ContainerRestartRule{}, false
}
