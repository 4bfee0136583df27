package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// netnsPrefix starts the name of every network namespace this package makes
// under /run/netns.
const netnsPrefix = "rayop-"

// names derives every host-global name of one Host from its state directory
// and bridge name.
type names struct {
	tag    string // 5 hex digits
	bridge string
}

func newNames(stateDir, bridge string) names {
	return names{tag: shortHash(stateDir+"\x00"+bridge, 5), bridge: bridge}
}

// shortHash is the first n hex digits of SHA-256 of s.
func shortHash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// podKey is a short, fixed-length key of a pod UID that is safe in interface,
// namespace and runc container names.
func podKey(uid string) string { return shortHash(uid, 8) }

// netnsNamePrefix is what every pod netns name of this host starts with.
func (n names) netnsNamePrefix() string { return netnsPrefix + n.tag + "-" }

func (n names) netns(uid string) string { return n.netnsNamePrefix() + podKey(uid) }

// vethPrefix is what every host-side veth of this host starts with; with the
// pod key it makes 15 characters, the kernel's limit for interface names.
func (n names) vethPrefix() string { return "rv" + n.tag }

func (n names) veth(uid string) string { return n.vethPrefix() + podKey(uid) }

// cgroupParent is the cgroup (relative to each hierarchy's root) under which
// every container of this host gets its own cgroup.
func (n names) cgroupParent() string { return "rayop-" + n.tag }

// podCgroup is the cgroup of one pod, below the host's parent: its
// containers' cgroups are below it, and its limits (pids.max) bound them
// all together.
func (n names) podCgroup(uid string) string {
	return n.cgroupParent() + "/" + podCgroupPrefix + podKey(uid)
}

// podCgroupPrefix starts the name of every pod cgroup below the parent.
const podCgroupPrefix = "pod-"

// nftTable is the name of this host's nftables table (family ip).
func (n names) nftTable() string { return "ray_operator_local_" + n.bridge }

// portGuardTable is the name of its port guard's table (family bridge).
func (n names) portGuardTable() string { return "ray_operator_local_" + n.bridge + "_ports" }

// containerID is the runc container id of one attempt of one container.
func containerID(uid, name string, attempt int) string {
	return podKey(uid) + "-" + name + "-" + strconv.Itoa(attempt)
}

// HostNames are the machine-wide names of what a host makes, so that a
// test can find that host's objects, and only its, among other hosts'.
// Bridge and NftTable are shared by every host with the same BridgeName
// (one at a time: the local cluster's host lock); the others carry the
// host's tag.
type HostNames struct {
	// NetnsPrefix starts the names of its pods' network namespaces under
	// /run/netns; VethPrefix those of their host-side veths.
	NetnsPrefix, VethPrefix string
	// CgroupParent is the cgroup, below each hierarchy's root, of its
	// containers.
	CgroupParent string
	// RunDir holds its containers' mounted roots.
	RunDir string
	// Bridge is its pods' bridge; NftTable its nftables table (family ip);
	// PortGuardTable the table (family bridge) that holds its pods to
	// their own addresses.
	Bridge, NftTable, PortGuardTable string
}

// NamesOf returns the names of a host with cfg's StateDir and BridgeName
// (default DefaultBridgeName).
func NamesOf(cfg HostConfig) (HostNames, error) {
	cfg, err := networkDefaults(cfg)
	if err != nil {
		return HostNames{}, err
	}
	n := newNames(cfg.StateDir, cfg.BridgeName)
	return HostNames{
		NetnsPrefix: n.netnsNamePrefix(), VethPrefix: n.vethPrefix(), CgroupParent: n.cgroupParent(),
		RunDir: n.runDir(), Bridge: n.bridge, NftTable: n.nftTable(), PortGuardTable: n.portGuardTable(),
	}, nil
}
