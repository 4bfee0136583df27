package raycluster

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// shouldDeletePod decides whether a Pod is beyond repair and gives the
// reason either way, following the kubelet's Pod phase rules:
//
//   - a Failed or Succeeded Pod never runs again: delete it;
//   - a Running Pod whose Ray container terminated restarts it unless the
//     restart policy is Never: delete it only then;
//   - anything else is left alone. Deleting a live head Pod loses the
//     cluster's state (without GCS fault tolerance), so the controller never
//     does it on a guess.
func shouldDeletePod(pod *corev1.Pod, nodeType rayv1.RayNodeType) (bool, string) {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return true, fmt.Sprintf("The %s Pod %s status is %s which is a terminal state. "+
			"KubeRay will delete the Pod and create new Pods in the next reconciliation if necessary.",
			nodeType, pod.Name, pod.Status.Phase)
	}
	terminated := rayContainerTerminated(pod)
	if pod.Status.Phase == corev1.PodRunning && terminated != nil {
		if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			return true, fmt.Sprintf("The Pod status of the %s Pod %s is %s, and the Ray container terminated status is %v. "+
				"The container is unable to restart due to its restart policy %s, so KubeRay will delete it.",
				nodeType, pod.Name, pod.Status.Phase, terminated, pod.Spec.RestartPolicy)
		}
		return false, fmt.Sprintf("The Pod status of the %s Pod %s is %s, and the Ray container terminated status is %v. "+
			"However, KubeRay will not delete the Pod because its restartPolicy is set to %s and it should be able to restart automatically.",
			nodeType, pod.Name, pod.Status.Phase, terminated, pod.Spec.RestartPolicy)
	}
	return false, fmt.Sprintf("KubeRay does not need to delete the %s Pod %s. The Pod status is %s, and the Ray container terminated status is %v.",
		nodeType, pod.Name, pod.Status.Phase, terminated)
}

// rayContainerTerminated returns the terminated state of the Ray container,
// found by name because container statuses are not in spec order.
func rayContainerTerminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	if len(pod.Spec.Containers) == 0 {
		return nil
	}
	name := pod.Spec.Containers[rayv1.RayContainerIndex].Name
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == name {
			return cs.State.Terminated
		}
	}
	return nil
}

// allPodsRunning reports whether there are Pods and every one is Running
// and not reported unready (KubeRay's rule: a Pod without a Ready condition
// counts as running).
func allPodsRunning(pods []corev1.Pod) bool {
	if len(pods) == 0 {
		return false
	}
	for i := range pods {
		if pods[i].Status.Phase != corev1.PodRunning {
			return false
		}
		for _, c := range pods[i].Status.Conditions {
			if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
				return false
			}
		}
	}
	return true
}
