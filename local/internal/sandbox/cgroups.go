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

// makePodCgroup creates a pod's cgroup, with pids.max when pidsLimit is
// positive, before runc puts the first container below it.
func makePodCgroup(rel string, pidsLimit int64) error {
	if pidsLimit <= 0 {
		return nil // runc creates the cgroup with the first container
	}
	return hostCgroups().limitPids(rel, pidsLimit)
}

// removeCgroup removes the pod's cgroup once its containers are gone.
func (s *Sandbox) removeCgroup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return removeCgroupTree(ctx, s.host.names.podCgroup(s.spec.UID))
}

// LimitPodsMemory bounds the memory of all the host's pods together (the
// memory limit of the cgroup their cgroups are below: memory.limit_in_bytes
// on cgroup v1, memory.max on v2), as a kubelet bounds its pods' cgroup by
// the node's allocatable memory: a pod without a memory limit of its own
// cannot take more than the node offers. Zero or less leaves them
// unbounded.
func (h *Host) LimitPodsMemory(bytes int64) error {
	return hostCgroups().limitMemory(h.names.cgroupParent(), bytes)
}
