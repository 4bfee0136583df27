package podinputs

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"
)

// mountTmpfs mounts a tmpfs on path, of size bytes when size is set (the
// kernel's default, half of the memory, otherwise).
func mountTmpfs(path string, size *resource.Quantity) error {
	opts := "mode=0777"
	if size != nil && !size.IsZero() {
		opts += ",size=" + strconv.FormatInt(size.Value(), 10)
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
