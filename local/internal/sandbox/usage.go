package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Usage is what a container, or the sum of a pod's running containers,
// uses, read from their cgroups.
type Usage struct {
	// RSSBytes is anonymous memory resident in RAM (memory.stat total_rss
	// on cgroup v1, anon on v2).
	RSSBytes uint64
	// MemoryBytes is everything the memory cgroups charge: RSS, page cache
	// and tmpfs files such as Ray's /tmp (memory.usage_in_bytes on v1,
	// memory.current on v2).
	MemoryBytes uint64
	// WorkingSetBytes is MemoryBytes less the page cache the kernel may
	// reclaim first (memory.stat total_inactive_file on v1, inactive_file
	// on v2), as the kubelet computes a container's working set; never
	// below zero.
	WorkingSetBytes uint64
	// CPU is the CPU time consumed since the containers started
	// (cpuacct.usage on v1, cpu.stat usage_usec on v2).
	CPU time.Duration
}

// Usage sums the cgroup counters of the sandbox's running containers.
func (s *Sandbox) Usage() (Usage, error) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.containers))
	for id := range s.containers {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	var total Usage
	for _, id := range ids {
		u, err := hostCgroups().usage(filepath.Join(s.host.names.podCgroup(s.spec.UID), id))
		if err != nil {
			return Usage{}, err
		}
		total.Add(u)
	}
	return total, nil
}

// Add adds u's figures to those of total.
func (total *Usage) Add(u Usage) {
	total.RSSBytes += u.RSSBytes
	total.MemoryBytes += u.MemoryBytes
	total.WorkingSetBytes += u.WorkingSetBytes
	total.CPU += u.CPU
}

// Usage reads the container's cgroup counters (what the kubelet API's
// resource metrics report for it).
func (c *Container) Usage() (Usage, error) {
	return hostCgroups().usage(filepath.Join(c.sandbox.host.names.podCgroup(c.sandbox.spec.UID), c.id))
}

func readUint(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading cgroup usage: %w", err)
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

// statFields returns the values of the "key value" lines of a file such
// as memory.stat or /proc/meminfo (a trailing unit is ignored), in the
// order of keys; every key must be there.
func statFields(path string, keys ...string) ([]uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	values := make([]uint64, len(keys))
	found := 0
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		i := slices.Index(keys, strings.TrimSuffix(firstOrEmpty(fields), ":"))
		if i < 0 || len(fields) < 2 {
			continue
		}
		if values[i], err = strconv.ParseUint(fields[1], 10, 64); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		found++
	}
	if found < len(keys) {
		return nil, fmt.Errorf("%s lacks one of %v", path, keys)
	}
	return values, nil
}

func firstOrEmpty(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}
