package podinputs

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// MemoryVolumeSize is the size of a Memory emptyDir of pod, as a kubelet
// sizes it: the node's allocatable memory (what all pods may use), less
// when the pod's memory limit is, less again when the volume's sizeLimit
// is; 0 (the kernel's default, half of the memory) when nothing is known.
func MemoryVolumeSize(pod *corev1.Pod, src *corev1.EmptyDirVolumeSource, nodeAllocatable corev1.ResourceList) int64 {
	size := int64(0)
	smaller := func(v int64) {
		if v > 0 && (size == 0 || v < size) {
			size = v
		}
	}
	if mem, ok := nodeAllocatable[corev1.ResourceMemory]; ok {
		smaller(mem.Value())
	}
	if limit, ok := podMemoryLimit(pod); ok {
		smaller(limit)
	}
	if src.SizeLimit != nil {
		smaller(src.SizeLimit.Value())
	}
	return size
}

// podMemoryLimit is the memory limit of the whole pod when every container
// declares one (a kubelet sets no pod limit otherwise): the containers' and
// sidecars' together, or the largest init container's if more.
func podMemoryLimit(pod *corev1.Pod) (int64, bool) {
	var sum, initMax int64
	for _, c := range pod.Spec.Containers {
		mem, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok || mem.IsZero() {
			return 0, false
		}
		sum += mem.Value()
	}
	for _, c := range pod.Spec.InitContainers {
		mem, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok || mem.IsZero() {
			return 0, false
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum += mem.Value()
		} else {
			initMax = max(initMax, mem.Value())
		}
	}
	return max(sum, initMax), len(pod.Spec.Containers) > 0
}

// mountTmpfs mounts a tmpfs on path, of size bytes when positive (the
// kernel's default, half of the memory, otherwise).
func mountTmpfs(path string, size int64) error {
	opts := "mode=0777"
	if size > 0 {
		opts += ",size=" + strconv.FormatInt(size, 10)
	}
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs on %s (%s): %w", path, opts, err)
	}
	return nil
}

// unmountTmpfs unmounts path; a path that is no longer a mount point is done.
// A mount still busy (a process left with a file open in it) is detached:
// its memory is freed when the last user lets go.
func unmountTmpfs(path string) error {
	err := unix.Unmount(path, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(path, unix.MNT_DETACH)
	}
	if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return fmt.Errorf("unmount tmpfs %s: %w", path, err)
}
