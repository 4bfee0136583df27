package netpolicy

import (
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"

	"github.com/ray-operator/ray-operator/local/internal/nftable"
)

// installDataplane (re)creates table (family ip) whose chains send the
// first packet of every new connection of the pod range cidr to queue:
//
//   - postrouting, before source NAT: traffic from a pod that came in on
//     bridge, or to a pod that leaves through it, whatever the other end
//     (bridged pod-to-pod traffic passes the IPv4 hooks, with the bridge as
//     its interfaces, because bridge-nf-call-iptables is on). Traffic of
//     the pod range on another interface is not this cluster's: a table a
//     killed cluster left must not hold up another network that uses the
//     same range (the node network suite's) until the next cluster starts;
//   - input: traffic from a pod, arriving on bridge, for the node itself.
//
// Connections that processes of the host's root user open are let through
// unjudged, as kube-network-policies does, so that the node's probes, exec
// and the API server's proxy reach isolated pods.
//
// kube-network-policies' own rules do the same with nftables' queue
// statement, which needs CONFIG_NFT_QUEUE; kernels without it (this
// project's machines) still have the xtables NFQUEUE target, which these
// rules use through nft_compat. Without the bypass flag a packet is
// dropped while nothing reads the queue (fail closed).
func installDataplane(table, bridge string, cidr netip.Prefix, queue uint16) error {
	return nftable.Replace(nftables.TableFamilyIPv4, table, func(c *nftables.Conn, t *nftables.Table) error {
		nftable.AddBaseChain(c, t, "postrouting", nftables.ChainTypeFilter, nftables.ChainHookPostrouting,
			nftables.ChainPriorityRef(*nftables.ChainPriorityNATSource-5),
			hostRootAccept(), establishedAccept(),
			queueFrom(bridge, cidr, queue),
			nftable.Join(nftable.IfNameIs(expr.MetaKeyOIFNAME, bridge), nftable.InPrefix(nftable.IPv4DestinationOffset, cidr), nfqueue(queue)))
		nftable.AddBaseChain(c, t, "input", nftables.ChainTypeFilter, nftables.ChainHookInput, nftables.ChainPriorityFilter,
			hostRootAccept(), establishedAccept(),
			queueFrom(bridge, cidr, queue))
		return nil
	})
}

// queueFrom is `iifname <bridge> ip saddr <cidr>` sent to queue.
func queueFrom(bridge string, cidr netip.Prefix, queue uint16) []expr.Any {
	return nftable.Join(nftable.IfNameIs(expr.MetaKeyIIFNAME, bridge), nftable.InPrefix(nftable.IPv4SourceOffset, cidr), nfqueue(queue))
}

// hostRootAccept is `meta skuid 0 accept`. A packet without a local socket
// (forwarded) does not match.
func hostRootAccept() []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeySKUID, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{0, 0, 0, 0}},
		&expr.Verdict{Kind: expr.VerdictAccept},
	}
}

// establishedAccept is `ct state established,related accept`: only a
// connection's first packet is judged.
func establishedAccept() []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED), Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{0, 0, 0, 0}},
		&expr.Verdict{Kind: expr.VerdictAccept},
	}
}

// nfqueue is the xtables target `NFQUEUE --queue-num <queue>` (revision 3,
// struct xt_NFQ_info_v3: queue number, number of queues, flags, all
// native-endian u16, padded to 8 bytes as XT_ALIGN does).
func nfqueue(queue uint16) []expr.Any {
	info := make([]byte, 0, 8)
	info = append(info, binaryutil.NativeEndian.PutUint16(queue)...)
	info = append(info, binaryutil.NativeEndian.PutUint16(1)...)
	info = append(info, 0, 0, 0, 0) // no flags (no bypass), padding
	unknown := xt.Unknown(info)
	return []expr.Any{&expr.Target{Name: "NFQUEUE", Rev: 3, Info: &unknown}}
}

// deleteTable removes the ip table if it exists.
func deleteTable(table string) error {
	return nftable.Delete(nftables.TableFamilyIPv4, table)
}
