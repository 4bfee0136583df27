package e2eutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// ContainerID is the runtime's ID of the container named name in the
// Pod's status ("runc://" cut), "" when it has none.
func ContainerID(p *corev1.Pod, name string) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == name {
			return strings.TrimPrefix(cs.ContainerID, "runc://")
		}
	}
	return ""
}

// KillContainerProcess SIGKILLs, from the host, the processes running
// binary (the base name of their argv[0]) in the cgroup of container id,
// and returns their host pids. A process killed so cannot clean up.
func KillContainerProcess(id, binary string) ([]int, error) {
	if id == "" {
		return nil, fmt.Errorf("no container ID")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var killed []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err1 := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cgroup, err2 := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err1 != nil || err2 != nil { // gone meanwhile
			continue
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		if filepath.Base(argv0) != binary || !strings.Contains(string(cgroup), id) {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return killed, fmt.Errorf("kill %d: %w", pid, err)
		}
		killed = append(killed, pid)
	}
	return killed, nil
}
