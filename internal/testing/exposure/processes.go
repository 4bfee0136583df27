package exposure

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcessTree returns root and all its descendants, parents before
// children, from the parent PIDs in /proc/<pid>/stat. A process whose
// parent exited has been reparented (to init or a subreaper) and is not
// found.
func ProcessTree(root int) ([]int, error) {
	children, err := childrenByParent()
	if err != nil {
		return nil, err
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree, nil
}

// childrenByParent maps every process's parent PID to its PID.
func childrenByParent() (map[int][]int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		if ppid, ok := parentPID(dir); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	return children, nil
}

// parentPID reads the fourth field of <dir>/stat, after the command in
// parentheses (which may hold spaces and parentheses itself).
func parentPID(dir string) (int, bool) {
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:])) // state ppid ...
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}
