// Package podstatus reads the state of a Pod the way the controllers judge
// it: whether it runs and is ready to take traffic, and which Pods of a
// group to give up first.
package podstatus

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

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

// LeastWorkFirst returns a copy of pods in the order the controllers delete
// them: those doing the least work first (not running and ready), then the
// youngest, so that long-running workers survive; Pods created in the same
// second by name, the greater first. Scaling down and a rolling update take
// their victims from its front.
func LeastWorkFirst(pods []corev1.Pod) []corev1.Pod {
	sorted := slices.Clone(pods)
	slices.SortStableFunc(sorted, func(a, b corev1.Pod) int {
		if ra, rb := RunningAndReady(&a), RunningAndReady(&b); ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.Name, a.Name)
	})
	return sorted
}
