package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) ([]string, error) {
	infos, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	points := make([]string, 0, len(infos))
	for _, m := range infos {
		points = append(points, m.Mountpoint)
	}
	// Longer paths are deeper; among equal paths the later mount is on top.
	slices.SortStableFunc(points, func(a, b string) int { return len(b) - len(a) })
	return points, nil
}

// unmountAll detaches every mount at or below dir, including mounts stacked
// on one another.
func unmountAll(dir string) error {
	for range 8 {
		points, err := mountsUnder(dir)
		if err != nil || len(points) == 0 {
			return err
		}
		var errs []error
		for _, p := range points {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	return fmt.Errorf("mounts under %s keep coming back", dir)
}

// unmountAllExcept is unmountAll of dir, sparing the mounts at or below
// the directories in keep.
func unmountAllExcept(dir string, keep []string) error {
	if len(keep) == 0 {
		return unmountAll(dir)
	}
	points, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range points {
		if !underAny(p, keep) {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// underAny reports whether path is one of dirs or below one.
func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// mountOverlay mounts an overlay of lower with its own upper and work
// directories at target, with the mount flags given.
func mountOverlay(target, lower, upper, work string, flags uintptr) error {
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work
	if err := unix.Mount("overlay", target, "overlay", flags, opts); err != nil {
		return fmt.Errorf("mount overlay at %s (%s): %w", target, opts, err)
	}
	return nil
}

// mountTmpfs mounts a tmpfs of size bytes at target, writable by everyone
// like /dev/shm.
func mountTmpfs(target string, size int64) error {
	opts := "mode=1777,size=" + strconv.FormatInt(size, 10)
	if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs at %s: %w", target, err)
	}
	return nil
}

// removeUnmounted removes dir and everything below it, but only when nothing
// is mounted there: a bind mount left below it would let the removal reach
// into the file system it shows.
func removeUnmounted(dir string) error {
	points, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	if len(points) > 0 {
		return fmt.Errorf("not removing %s: still mounted at %v", dir, points)
	}
	return os.RemoveAll(dir)
}
