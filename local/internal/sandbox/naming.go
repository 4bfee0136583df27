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

// nftTable is the name of this host's nftables table (family ip).
func (n names) nftTable() string { return "ray_operator_local_" + n.bridge }

// containerID is the runc container id of one attempt of one container.
func containerID(uid, name string, attempt int) string {
	return podKey(uid) + "-" + name + "-" + strconv.Itoa(attempt)
}
