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

// v1Hierarchy is the mount point of the cgroup v1 hierarchy of controller
// ("pids", "memory"), or "" when the host has none.
func v1Hierarchy(controller string) (string, error) {
	infos, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup"))
	if err != nil {
		return "", fmt.Errorf("read mountinfo: %w", err)
	}
	for _, m := range infos {
		if slices.Contains(strings.Split(m.VFSOptions, ","), controller) {
			return m.Mountpoint, nil
		}
	}
	return "", nil
}

// writeV1Limit creates the cgroup rel in controller's v1 hierarchy and
// writes value to its file (pids.max, memory.limit_in_bytes). The limits
// the local node sets are v1 ones, as the usage it reads: a host without
// that hierarchy is an error.
func writeV1Limit(controller, rel, file, value string) error {
	root, err := v1Hierarchy(controller)
	if err != nil {
		return err
	}
	if root == "" {
		return fmt.Errorf("the host has no cgroup v1 %s hierarchy to set %s in", controller, file)
	}
	dir := filepath.Join(root, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("writing %s of cgroup %s: %w", file, rel, err)
	}
	return nil
}

// makePodCgroup creates a pod's cgroup, with pids.max when pidsLimit is
// positive, before runc puts the first container below it.
func makePodCgroup(rel string, pidsLimit int64) error {
	if pidsLimit <= 0 {
		return nil // runc creates the cgroup with the first container
	}
	return writeV1Limit("pids", rel, "pids.max", strconv.FormatInt(pidsLimit, 10))
}

// removeCgroup removes the pod's cgroup once its containers are gone.
func (s *Sandbox) removeCgroup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return removeCgroupTree(ctx, s.host.names.podCgroup(s.spec.UID))
}

// LimitPodsMemory bounds the memory of all the host's pods together (the
// memory.limit_in_bytes of the cgroup their cgroups are below), as a kubelet
// bounds its pods' cgroup by the node's allocatable memory: a pod without
// a memory limit of its own cannot take more than the node offers. Zero or
// less leaves them unbounded.
func (h *Host) LimitPodsMemory(bytes int64) error {
	value := "-1"
	if bytes > 0 {
		value = strconv.FormatInt(bytes, 10)
	}
	return writeV1Limit("memory", h.names.cgroupParent(), "memory.limit_in_bytes", value)
}
