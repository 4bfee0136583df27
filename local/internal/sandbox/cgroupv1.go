package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/sys/mountinfo"
)

// cgroupV1 is a host with a hierarchy per controller under root (limits are
// set in the hierarchy that mountinfo names for the controller, usage read
// from root/memory and root/cpuacct, as every v1 distribution links them).
type cgroupV1 struct{ root string }

func (cgroupV1) limitPids(rel string, n int64) error {
	return writeV1Limit("pids", rel, "pids.max", strconv.FormatInt(n, 10))
}

func (cgroupV1) limitMemory(rel string, bytes int64) error {
	value := "-1"
	if bytes > 0 {
		value = strconv.FormatInt(bytes, 10)
	}
	return writeV1Limit("memory", rel, "memory.limit_in_bytes", value)
}

func (cgroupV1) limitCPUShares(rel string, shares uint64) error {
	return writeV1Limit("cpu", rel, "cpu.shares", strconv.FormatUint(shares, 10))
}

func (c cgroupV1) usage(rel string) (Usage, error) { return cgroupUsage(c.root, rel) }

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
// writes value to its file (pids.max, memory.limit_in_bytes). A v1 host
// without that controller's hierarchy is an error.
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

// cgroupUsage reads one container's cgroup (rel, relative to the
// hierarchy roots under root) from the v1 memory and cpuacct controllers.
func cgroupUsage(root, rel string) (Usage, error) {
	var u Usage
	var err error
	memDir := filepath.Join(root, "memory", rel)
	if u.MemoryBytes, err = readUint(filepath.Join(memDir, "memory.usage_in_bytes")); err != nil {
		return Usage{}, err
	}
	stat, err := statFields(filepath.Join(memDir, "memory.stat"), "total_rss", "total_inactive_file")
	if err != nil {
		return Usage{}, err
	}
	u.RSSBytes = stat[0]
	u.WorkingSetBytes = u.MemoryBytes - min(stat[1], u.MemoryBytes)
	ns, err := readUint(filepath.Join(root, "cpuacct", rel, "cpuacct.usage"))
	if err != nil {
		return Usage{}, err
	}
	u.CPU = time.Duration(ns) //nolint:gosec // nanoseconds of CPU time fit an int64
	return u, nil
}
