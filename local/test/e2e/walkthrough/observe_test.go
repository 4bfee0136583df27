package walkthrough_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Host-wide names of the local cluster (local/internal/sandbox names them
// so).
const (
	netnsPrefix  = "rayop-"
	bridgeName   = "rayop0"
	vethPrefix   = "rv"
	cgroupPrefix = "rayop-"
)

// hostState is what the machine shows of a local cluster.
type hostState struct {
	netns     map[string]uint64 // /run/netns name → namespace inode
	links     []string          // the bridge and pod veths
	nftTables []string          // "ip kube-proxy", "ip ray_operator_local_rayop0"...
	mounts    []string          // mount points under the state directory
	cgroups   []string          // container cgroups
	processes []string          // "pid cmdline" of the cluster's processes
}

// observeHost looks at the machine. Processes count as the cluster's when
// their command line names stateDir (control-plane components, runc,
// CoreDNS, kube-proxy) or when they live in one of the network namespaces
// of podNetns (what runs in pods).
func observeHost(t *testing.T, stateDir string, podNetns map[uint64]bool) hostState {
	t.Helper()
	s := hostState{netns: namedNetns(t), links: clusterLinks(t), nftTables: nftTables(t), mounts: mountsUnder(t, stateDir), cgroups: containerCgroups()}
	if podNetns == nil {
		podNetns = s.netnsInodes()
	}
	s.processes = clusterProcesses(stateDir, podNetns)
	return s
}

// netnsInodes is the set of the pod network namespaces' inodes.
func (s hostState) netnsInodes() map[uint64]bool {
	inodes := map[uint64]bool{}
	for _, ino := range s.netns {
		inodes[ino] = true
	}
	return inodes
}

// newSince lists, one line each, what s has that before had not; "" when
// nothing.
func (s hostState) newSince(before hostState) string {
	var b strings.Builder
	for name := range s.netns {
		if _, ok := before.netns[name]; !ok {
			fmt.Fprintf(&b, "network namespace %s\n", name)
		}
	}
	for _, list := range []struct {
		what        string
		now, before []string
	}{
		{"link", s.links, before.links},
		{"nftables table", s.nftTables, before.nftTables},
		{"mount", s.mounts, before.mounts},
		{"cgroup", s.cgroups, before.cgroups},
		{"process", s.processes, before.processes},
	} {
		for _, item := range list.now {
			if !slices.Contains(list.before, item) {
				fmt.Fprintf(&b, "%s %s\n", list.what, item)
			}
		}
	}
	return b.String()
}

func namedNetns(t *testing.T) map[string]uint64 {
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	found := map[string]uint64{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), netnsPrefix) {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join("/run/netns", e.Name()), &st); err == nil {
			found[e.Name()] = st.Ino
		}
	}
	return found
}

func clusterLinks(t *testing.T) []string {
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range ifaces {
		if i.Name == bridgeName || strings.HasPrefix(i.Name, vethPrefix) {
			names = append(names, i.Name)
		}
	}
	return names
}

func nftTables(t *testing.T) []string {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		t.Fatalf("nft list tables: %v", err)
	}
	var tables []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, ok := strings.CutPrefix(line, "table "); ok && (strings.Contains(name, "kube-proxy") || strings.Contains(name, "ray_operator_local")) {
			tables = append(tables, name)
		}
	}
	return tables
}

func mountsUnder(t *testing.T, dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir) {
			points = append(points, fields[4])
		}
	}
	return points
}

func containerCgroups() []string {
	matches, _ := filepath.Glob("/sys/fs/cgroup/*/" + cgroupPrefix + "*")
	return matches
}

// clusterProcesses lists processes whose command line names stateDir or
// whose network namespace is one of podNetns.
func clusterProcesses(stateDir string, podNetns map[uint64]bool) []string {
	self := fmt.Sprint(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, dir := range dirs {
		pid := filepath.Base(dir)
		if pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		cmd := string(bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '}))
		var st syscall.Stat_t
		inPod := syscall.Stat(filepath.Join(dir, "ns", "net"), &st) == nil && podNetns[st.Ino]
		if inPod || strings.Contains(cmd, stateDir) {
			found = append(found, pid+" "+cmd)
		}
	}
	return found
}
