package walkthrough_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/hostlock"
	"github.com/ray-operator/ray-operator/local/internal/netaddons"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// bridgeName is the local cluster's bridge.
const bridgeName = sandbox.DefaultBridgeName

// kubeProxyTable is the nftables table of the cluster's kube-proxy (one per
// machine).
const kubeProxyTable = netaddons.KubeProxyTable

// cluster names what belongs to the local cluster of one state directory:
// what its node's sandboxes carry its tag in (local/internal/sandbox names
// them from the state directory), what lives under its state or run
// directory or names the state directory on its command line, what runs in
// its pods' network namespaces, and what a local cluster shares with every
// other but only makes while it holds the host lock (the bridge, its
// nftables table, kube-proxy's).
type cluster struct {
	stateDir string
	host     sandbox.HostNames
}

func clusterOf(t *testing.T, stateDir string) cluster {
	t.Helper()
	host, err := localcluster.NodeHostNames(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	return cluster{stateDir: stateDir, host: host}
}

// hostState is what the machine shows of one local cluster.
type hostState struct {
	netns     map[string]uint64 // /run/netns name → namespace inode
	veths     []string          // the pods' host-side veths
	mounts    []string          // mount points under the state or run directory
	cgroups   []string          // the containers' cgroup, per hierarchy
	processes []string          // "pid cmdline"
	// shared are the bridge and nftables tables ("ip kube-proxy"...); nil
	// when they were not looked at (another cluster may have held them).
	shared []string
}

// listing is what the machine shows, of every cluster and more.
type listing struct {
	netns     map[string]uint64
	links     []string
	nftTables []string // "ip kube-proxy"
	mounts    []string
	cgroups   []string // /sys/fs/cgroup/<hierarchy>/<top-level cgroup>
	processes []process
}

// process is one process: its pid, command line and network namespace.
type process struct {
	pid, cmd string
	netns    uint64
}

// observeHost looks at the machine for the cluster's objects. Processes
// count as the cluster's when their command line names its state directory
// (control-plane components, runc, CoreDNS, kube-proxy) or when they live
// in one of the network namespaces of podNetns (what runs in pods; nil: the
// cluster's namespaces now). The shared objects are looked at when shared
// is set (the cluster runs and holds the host lock) or when no other
// cluster holds the lock.
func (c cluster) observeHost(t *testing.T, podNetns map[uint64]bool, shared bool) hostState {
	t.Helper()
	if !shared {
		lock, err := tryHostLock()
		if err == nil {
			defer func() { _ = lock.Release() }()
		} else {
			t.Logf("the shared bridge and nftables tables are not checked: %v", err)
		}
		shared = err == nil
	}
	return c.filter(listHost(t), podNetns, shared)
}

// tryHostLock takes the host lock if no local cluster holds it, without
// waiting.
func tryHostLock() (*hostlock.Lock, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return hostlock.Acquire(ctx, hostlock.DefaultPath, nil)
}

// filter keeps what of l is the cluster's (see observeHost).
func (c cluster) filter(l listing, podNetns map[uint64]bool, shared bool) hostState {
	s := hostState{netns: map[string]uint64{}}
	for name, ino := range l.netns {
		if strings.HasPrefix(name, c.host.NetnsPrefix) {
			s.netns[name] = ino
		}
	}
	if podNetns == nil {
		podNetns = s.netnsInodes()
	}
	s.veths = keep(l.links, func(name string) bool { return strings.HasPrefix(name, c.host.VethPrefix) })
	s.mounts = keep(l.mounts, func(p string) bool { return under(p, c.stateDir) || under(p, c.host.RunDir) })
	s.cgroups = keep(l.cgroups, func(p string) bool { return filepath.Base(p) == c.host.CgroupParent })
	for _, p := range l.processes {
		if podNetns[p.netns] || strings.Contains(p.cmd, c.stateDir) {
			s.processes = append(s.processes, p.pid+" "+p.cmd)
		}
	}
	if shared {
		s.shared = keep(l.links, func(name string) bool { return name == c.host.Bridge })
		s.shared = append(s.shared, keep(l.nftTables, func(table string) bool {
			return table == "ip "+c.host.NftTable || table == "bridge "+c.host.PortGuardTable || strings.HasSuffix(table, " "+kubeProxyTable)
		})...)
	}
	return s
}

// keep is the items of list ok accepts.
func keep(list []string, ok func(string) bool) []string {
	var out []string
	for _, item := range list {
		if ok(item) {
			out = append(out, item)
		}
	}
	return out
}

// under reports whether path is dir or below it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// netnsInodes is the set of the pod network namespaces' inodes.
func (s hostState) netnsInodes() map[uint64]bool {
	inodes := map[uint64]bool{}
	for _, ino := range s.netns {
		inodes[ino] = true
	}
	return inodes
}

// String lists, one line each, every object of s; "" when there is none.
func (s hostState) String() string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(s.netns)) {
		fmt.Fprintf(&b, "network namespace %s\n", name)
	}
	for _, list := range []struct {
		what  string
		items []string
	}{
		{"veth", s.veths}, {"mount", s.mounts}, {"cgroup", s.cgroups}, {"process", s.processes},
		{"bridge or nftables table", s.shared},
	} {
		for _, item := range list.items {
			fmt.Fprintf(&b, "%s %s\n", list.what, item)
		}
	}
	return b.String()
}

// listHost lists what the machine shows.
func listHost(t *testing.T) listing {
	t.Helper()
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/*")
	return listing{netns: namedNetns(t), links: linkNames(t), nftTables: nftTables(t), mounts: mountPoints(t),
		cgroups: cgroups, processes: processes()}
}

func namedNetns(t *testing.T) map[string]uint64 {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	found := map[string]uint64{}
	for _, e := range entries {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join("/run/netns", e.Name()), &st); err == nil {
			found[e.Name()] = st.Ino
		}
	}
	return found
}

func linkNames(t *testing.T) []string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(ifaces))
	for _, i := range ifaces {
		names = append(names, i.Name)
	}
	return names
}

func nftTables(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		t.Fatalf("nft list tables: %v", err)
	}
	var tables []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, ok := strings.CutPrefix(line, "table "); ok {
			tables = append(tables, name)
		}
	}
	return tables
}

func mountPoints(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) > 4 {
			points = append(points, fields[4])
		}
	}
	return points
}

// processes lists every process but this one.
func processes() []process {
	self := fmt.Sprint(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var found []process
	for _, dir := range dirs {
		pid := filepath.Base(dir)
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if pid == self || err != nil {
			continue
		}
		p := process{pid: pid, cmd: string(bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '}))}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(dir, "ns", "net"), &st) == nil {
			p.netns = st.Ino
		}
		found = append(found, p)
	}
	return found
}
