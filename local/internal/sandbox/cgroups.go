package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/sys/mountinfo"
	"k8s.io/apimachinery/pkg/util/wait"
)

// cgroupRoots lists the mount points of the host's cgroup hierarchies (one
// per v1 controller, plus the v2 one of a hybrid or unified host).
func cgroupRoots() ([]string, error) {
	infos, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup", "cgroup2"))
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	roots := make([]string, 0, len(infos))
	for _, m := range infos {
		roots = append(roots, m.Mountpoint)
	}
	return roots, nil
}

// removeCgroupTree kills every process left in the cgroup parent (relative
// to each hierarchy root) and its children, then removes the cgroups,
// deepest first. Killed processes leave their cgroups asynchronously, so the
// removal is retried until ctx ends.
func removeCgroupTree(ctx context.Context, parent string) error {
	roots, err := cgroupRoots()
	if err != nil {
		return err
	}
	var dirs []string
	for _, root := range roots {
		dirs = append(dirs, cgroupDirs(filepath.Join(root, parent))...)
	}
	for _, d := range dirs {
		killCgroupProcs(d)
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	var lastErr error
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		lastErr = nil
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				killCgroupProcs(d)
				lastErr = err
			}
		}
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("remove cgroup %s: %w (last: %w)", parent, err, lastErr)
	}
	return nil
}

// cgroupDirs is dir and every cgroup below it, or nothing if dir is missing.
func cgroupDirs(dir string) []string {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	return dirs
}

// killCgroupProcs sends SIGKILL to every process in one cgroup.
func killCgroupProcs(dir string) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, field := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(field); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
