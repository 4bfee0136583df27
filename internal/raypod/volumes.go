package raypod

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Volumes the operator adds to Ray Pods.
const (
	SharedMemoryVolumeName = "shared-mem"
	SharedMemoryMountPath  = "/dev/shm"
	RayLogsVolumeName      = "ray-logs"
	RayLogsMountPath       = "/tmp/ray"
)

// addVolumes mounts a memory-backed /dev/shm for the object store (unless
// plasma-directory moves it), on an autoscaling head a shared /tmp/ray so the
// autoscaler's event logs reach the Ray head, and the /tmp/ray the history
// collector reads.
func (b *podBuild) addVolumes() {
	ray := b.rayContainer()
	if _, ok := b.params[paramPlasmaDirectory]; !ok {
		b.addEmptyDir(ray, SharedMemoryVolumeName, SharedMemoryMountPath, corev1.StorageMediumMemory)
	}
	b.shareLogsWithAutoscaler()
	b.shareLogsWithCollector()
}

func (b *podBuild) shareLogsWithAutoscaler() {
	if b.nodeType != rayv1.HeadNode || !AutoscalingEnabled(b.cluster) {
		return
	}
	b.addEmptyDir(b.rayContainer(), RayLogsVolumeName, RayLogsMountPath, corev1.StorageMediumDefault)
	if i := containerIndex(b.pod.Spec.Containers, AutoscalerContainerName); i >= 0 {
		b.addEmptyDir(&b.pod.Spec.Containers[i], RayLogsVolumeName, RayLogsMountPath, corev1.StorageMediumDefault)
	}
}

// addEmptyDir mounts an emptyDir volume at path in c, creating the volume if
// the Pod does not have one of that name. Nothing happens if c already
// mounts something at path. A memory-backed volume is limited to the
// container's memory limit (or request).
func (b *podBuild) addEmptyDir(c *corev1.Container, name, path string, medium corev1.StorageMedium) {
	if slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path }) {
		return
	}
	if !slices.ContainsFunc(b.pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == name }) {
		src := &corev1.EmptyDirVolumeSource{Medium: medium}
		if medium == corev1.StorageMediumMemory {
			src.SizeLimit = memoryOf(c)
		}
		b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{
			Name:         name,
			VolumeSource: corev1.VolumeSource{EmptyDir: src},
		})
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path})
}

func memoryOf(c *corev1.Container) *resource.Quantity {
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		return &q
	}
	if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
		return &q
	}
	return nil
}

func containerIndex(containers []corev1.Container, name string) int {
	return slices.IndexFunc(containers, func(c corev1.Container) bool { return c.Name == name })
}
