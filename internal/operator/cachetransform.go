package operator

import (
	corev1 "k8s.io/api/core/v1"
)

// trimPod keeps of a cached Pod what the controllers read: its metadata
// (without managedFields), its status, and of its spec the restart policy,
// node, scheduler and each container's name and image. The rest of the spec
// (environment, commands, probes, mounts, volumes, resources) is most of a
// Ray Pod's size and is only ever written, from the RayCluster's templates,
// never read back: at 1,000 clusters of 4 Pods, leaving it out of the cache
// halves the operator's memory. A trimmed Pod cannot be sent back with
// Update; the controllers change Pods with merge patches (computed from two
// trimmed copies, so they carry only the change) or delete them.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil // a deletion tombstone: its Pod was trimmed when cached
	}
	pod.ManagedFields = nil
	containers := make([]corev1.Container, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		containers[i] = corev1.Container{Name: c.Name, Image: c.Image}
	}
	pod.Spec = corev1.PodSpec{
		Containers:    containers,
		RestartPolicy: pod.Spec.RestartPolicy,
		NodeName:      pod.Spec.NodeName,
		SchedulerName: pod.Spec.SchedulerName,
	}
	return pod, nil
}
