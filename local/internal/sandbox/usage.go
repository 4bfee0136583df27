package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Usage is what a pod's running containers use, read from their cgroups.
type Usage struct {
	// RSSBytes is anonymous memory resident in RAM (memory.stat total_rss).
	RSSBytes uint64
	// MemoryBytes is everything the memory cgroups charge: RSS, page cache
	// and tmpfs files such as Ray's /tmp (memory.usage_in_bytes).
	MemoryBytes uint64
	// CPU is the CPU time consumed since the containers started
	// (cpuacct.usage).
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
		u, err := cgroupUsage(filepath.Join(s.host.names.cgroupParent(), id))
		if err != nil {
			return Usage{}, err
		}
		total.RSSBytes += u.RSSBytes
		total.MemoryBytes += u.MemoryBytes
		total.CPU += u.CPU
	}
	return total, nil
}

// cgroupRoot is where the cgroup v1 hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupUsage reads one container's cgroup (relative to the hierarchy
// roots) from the v1 memory and cpuacct controllers.
func cgroupUsage(rel string) (Usage, error) {
	var u Usage
	var err error
	if u.MemoryBytes, err = readUint(filepath.Join(cgroupRoot, "memory", rel, "memory.usage_in_bytes")); err != nil {
		return Usage{}, err
	}
	if u.RSSBytes, err = statField(filepath.Join(cgroupRoot, "memory", rel, "memory.stat"), "total_rss"); err != nil {
		return Usage{}, err
	}
	ns, err := readUint(filepath.Join(cgroupRoot, "cpuacct", rel, "cpuacct.usage"))
	if err != nil {
		return Usage{}, err
	}
	u.CPU = time.Duration(ns) //nolint:gosec // nanoseconds of CPU time fit an int64
	return u, nil
}

func readUint(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading cgroup usage: %w", err)
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

// statField returns one "key value" line's value of a memory.stat file.
func statField(path, key string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reading cgroup usage: %w", err)
	}
	defer func() { _ = f.Close() }()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), key+" "); ok {
			return strconv.ParseUint(value, 10, 64)
		}
	}
	if err := scanner.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no %s", path, key)
}
