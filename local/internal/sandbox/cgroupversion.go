package sandbox

import (
	"sync"

	"github.com/opencontainers/cgroups"
)

// cgroupRoot is where the host's cgroups are mounted: a tmpfs with one
// hierarchy per v1 controller below it, or the v2 unified hierarchy itself.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupVersion is what the node does with the host's cgroups that depends
// on their version. Paths are relative to the hierarchy roots, as runc's
// cgroupsPath; the node's cgroups (the host's parent, a pod's) hold no
// process of their own, only cgroups below them, as cgroup v2 requires of a
// cgroup that gives controllers to its children.
type cgroupVersion interface {
	// limitPids creates the cgroup rel with pids.max n.
	limitPids(rel string, n int64) error
	// limitMemory creates the cgroup rel with a memory limit of bytes,
	// which bounds every cgroup below it; zero or less: none.
	limitMemory(rel string, bytes int64) error
	// limitCPUShares creates the cgroup rel with a CPU weight of shares
	// (v1's cpu.shares; v2's cpu.weight converted as runc converts it)
	// against its siblings.
	limitCPUShares(rel string, shares uint64) error
	// usage reads the counters of one container's cgroup rel.
	usage(rel string) (Usage, error)
}

// hostCgroups is the host's cgroup version, detected once as runc detects
// it: v2 when /sys/fs/cgroup is the unified hierarchy, else v1. A hybrid
// host (v1 controllers and a v2 hierarchy at /sys/fs/cgroup/unified, which
// has no controllers) is v1, for runc and for the node.
var hostCgroups = sync.OnceValue(func() cgroupVersion {
	if cgroups.IsCgroup2UnifiedMode() {
		return cgroupV2{root: cgroupRoot}
	}
	return cgroupV1{root: cgroupRoot}
})
