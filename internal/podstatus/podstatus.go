// Package podstatus reads the state of a Pod the way the controllers judge
// it: whether it runs and is ready to take traffic.
package podstatus

import corev1 "k8s.io/api/core/v1"

// Ready reports whether a Pod has condition Ready True.
func Ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// RunningAndReady reports whether a Pod is Running with condition Ready:
// how the RayCluster controller counts ready Pods and how the RayService
// controller judges a head Pod without the RayClusterStatusConditions gate.
func RunningAndReady(pod *corev1.Pod) bool {
	return pod != nil && pod.Status.Phase == corev1.PodRunning && Ready(pod)
}
