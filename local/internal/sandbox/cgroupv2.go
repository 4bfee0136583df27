package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs2"
	"github.com/opencontainers/cgroups/fscommon"
	"golang.org/x/sys/unix"
)

// cgroupV2 is a host whose cgroups are the unified hierarchy at root. A
// limit is written through runc's own cgroup library (github.com/
// opencontainers/cgroups, fs2) once the controller is enabled on the path
// down to the cgroup; runc enables the others for a container's cgroup
// when it creates it.
type cgroupV2 struct{ root string }

func (c cgroupV2) limitPids(rel string, n int64) error {
	return c.set(rel, "pids", &cgroups.Resources{PidsLimit: &n})
}

func (c cgroupV2) limitMemory(rel string, bytes int64) error {
	if bytes <= 0 {
		bytes = -1 // memory.max "max"
	}
	return c.set(rel, "memory", &cgroups.Resources{Memory: bytes})
}

func (c cgroupV2) limitCPUShares(rel string, shares uint64) error {
	return c.set(rel, "cpu", &cgroups.Resources{CpuWeight: cgroups.ConvertCPUSharesToCgroupV2Value(shares)})
}

// set creates the cgroup rel with controller enabled down to it, then
// writes r's limits into it.
func (c cgroupV2) set(rel, controller string, r *cgroups.Resources) error {
	dir, err := c.delegate(rel, controller)
	if err != nil {
		return err
	}
	m, err := fs2.NewManager(&cgroups.Cgroup{Resources: r}, dir)
	if err != nil {
		return err
	}
	if err := m.Set(r); err != nil {
		return fmt.Errorf("setting the %s limit of cgroup %s: %w", controller, rel, err)
	}
	return nil
}

// delegate creates the cgroup rel and enables controller in the
// cgroup.subtree_control of the root and of every cgroup on the way down
// to rel, so that rel has the controller's files. It returns rel's
// directory.
func (c cgroupV2) delegate(rel, controller string) (string, error) {
	dir := filepath.Join(c.root, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	parent := c.root
	for name := range strings.SplitSeq(filepath.Clean(strings.TrimPrefix(rel, "/")), "/") {
		if err := enableController(parent, controller); err != nil {
			return "", err
		}
		parent = filepath.Join(parent, name)
	}
	return dir, nil
}

// enableController gives controller to the cgroups below dir. The kernel
// refuses it (EBUSY) when dir is not the root and holds processes (cgroup
// v2's no-internal-process rule: the root of a container's cgroup
// namespace, for one), and when dir lacks the controller itself (ENOENT).
func enableController(dir, controller string) error {
	err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+controller), 0o644)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("cgroup %s holds processes, so cgroup v2 lets it give no %s controller to the cgroups below it: move them into a cgroup below it first", dir, controller)
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("cgroup %s has no %s controller to give (see its cgroup.controllers): %w", dir, controller, err)
	}
	return fmt.Errorf("enabling the %s controller below cgroup %s: %w", controller, dir, err)
}

// usage reads memory.current, memory.stat's anon and inactive_file, and
// cpu.stat's usage_usec (what the kubelet's cAdvisor reads on v2).
func (c cgroupV2) usage(rel string) (Usage, error) {
	dir := filepath.Join(c.root, rel)
	var u Usage
	var err error
	if u.MemoryBytes, err = fscommon.GetCgroupParamUint(dir, "memory.current"); err != nil {
		return Usage{}, fmt.Errorf("reading cgroup usage: %w", err)
	}
	if u.RSSBytes, err = fscommon.GetValueByKey(dir, "memory.stat", "anon"); err != nil {
		return Usage{}, fmt.Errorf("reading cgroup usage: %w", err)
	}
	inactive, err := fscommon.GetValueByKey(dir, "memory.stat", "inactive_file")
	if err != nil {
		return Usage{}, fmt.Errorf("reading cgroup usage: %w", err)
	}
	u.WorkingSetBytes = u.MemoryBytes - min(inactive, u.MemoryBytes)
	usec, err := fscommon.GetValueByKey(dir, "cpu.stat", "usage_usec")
	if err != nil {
		return Usage{}, fmt.Errorf("reading cgroup usage: %w", err)
	}
	u.CPU = time.Duration(usec) * time.Microsecond //nolint:gosec // microseconds of CPU time fit an int64
	return u, nil
}
