package walkthrough_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFilterKeepsOnlyTheClustersObjects: of a machine that also runs
// another local cluster's node (another state directory, so another tag)
// and has unrelated objects, the filter keeps exactly the objects of the
// cluster it was made for, and the shared bridge and nftables tables only
// when asked to.
func TestFilterKeepsOnlyTheClustersObjects(t *testing.T) {
	ours, other := clusterOf(t, "/tmp/walkthrough/ours"), clusterOf(t, "/tmp/walkthrough/other")
	if ours.host.NetnsPrefix == other.host.NetnsPrefix || ours.host.CgroupParent == other.host.CgroupParent {
		t.Fatalf("two state directories give the same names: %+v", ours.host)
	}
	l := listing{netns: map[string]uint64{}}
	for i, c := range []cluster{ours, other} {
		l.netns[c.host.NetnsPrefix+"0000000a"] = uint64(100 + i)
		l.links = append(l.links, c.host.VethPrefix+"0000000a")
		l.mounts = append(l.mounts, c.stateDir+"/node/pods/uid/shm", c.host.RunDir+"/c/rootfs")
		l.cgroups = append(l.cgroups, "/sys/fs/cgroup/memory/"+c.host.CgroupParent)
		l.processes = append(l.processes, process{pid: strconv.Itoa(10 + i), cmd: "etcd --data-dir=" + c.stateDir + "/etcd"},
			process{pid: strconv.Itoa(20 + i), cmd: "raylet", netns: uint64(100 + i)})
	}
	l.links = append(l.links, "eth0", "rayop0")
	l.mounts = append(l.mounts, "/tmp/walkthrough/ours-not", "/")
	l.cgroups = append(l.cgroups, "/sys/fs/cgroup/memory/system.slice")
	l.nftTables = []string{"ip kube-proxy", "ip " + ours.host.NftTable, "ip ray_operator_local_rsb12345678", "inet filter"}
	l.processes = append(l.processes, process{pid: "30", cmd: "sshd"})

	got := ours.filter(l, nil, false)
	want := "network namespace " + ours.host.NetnsPrefix + "0000000a\nveth " + ours.host.VethPrefix + "0000000a\n" +
		"mount /tmp/walkthrough/ours/node/pods/uid/shm\nmount " + ours.host.RunDir + "/c/rootfs\n" +
		"cgroup /sys/fs/cgroup/memory/" + ours.host.CgroupParent + "\n" +
		"process 10 etcd --data-dir=/tmp/walkthrough/ours/etcd\nprocess 20 raylet\n"
	if got.String() != want {
		t.Errorf("the cluster's objects:\n%s\nwant:\n%s", got, want)
	}
	shared := ours.filter(l, nil, true).shared
	if want := []string{"rayop0", "ip kube-proxy", "ip " + ours.host.NftTable}; !slices.Equal(shared, want) {
		t.Errorf("shared objects %v, want %v", shared, want)
	}
	if left := ours.filter(listing{netns: map[string]uint64{}, links: []string{"eth0"}}, nil, true); left.String() != "" {
		t.Errorf("a machine without the cluster shows:\n%s", left)
	}
	if !strings.HasPrefix(ours.host.NftTable, "ray_operator_local_") {
		t.Errorf("nftables table %q", ours.host.NftTable)
	}
}
