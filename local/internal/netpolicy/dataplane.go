package netpolicy

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"
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
	if err := deleteTable(table); err != nil {
		return err
	}
	c, err := nftables.New()
	if err != nil {
		return err
	}
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: table})
	accept := nftables.ChainPolicyAccept
	post := c.AddChain(&nftables.Chain{
		Name: "postrouting", Table: t, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookPostrouting,
		Priority: nftables.ChainPriorityRef(*nftables.ChainPriorityNATSource - 5), Policy: &accept,
	})
	input := c.AddChain(&nftables.Chain{
		Name: "input", Table: t, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookInput,
		Priority: nftables.ChainPriorityFilter, Policy: &accept,
	})
	rules := map[*nftables.Chain][][]expr.Any{
		post: {
			hostRootAccept(), establishedAccept(),
			join(ifname(expr.MetaKeyIIFNAME, bridge), inPrefix(ipSourceOffset, cidr), nfqueue(queue)),
			join(ifname(expr.MetaKeyOIFNAME, bridge), inPrefix(ipDestinationOffset, cidr), nfqueue(queue)),
		},
		input: {
			hostRootAccept(), establishedAccept(),
			join(ifname(expr.MetaKeyIIFNAME, bridge), inPrefix(ipSourceOffset, cidr), nfqueue(queue)),
		},
	}
	for chain, exprs := range rules {
		for _, e := range exprs {
			c.AddRule(&nftables.Rule{Table: t, Chain: chain, Exprs: e})
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("install nftables table %s: %w", table, err)
	}
	return nil
}

// Offsets of the addresses in the IPv4 header.
const (
	ipSourceOffset      = 12
	ipDestinationOffset = 16
)

func join(parts ...[]expr.Any) []expr.Any {
	var all []expr.Any
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
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

// inPrefix is `ip saddr|daddr <cidr>`.
func inPrefix(offset uint32, cidr netip.Prefix) []expr.Any {
	network := cidr.Masked().Addr().As4()
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: net.CIDRMask(cidr.Bits(), 32), Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: network[:]},
	}
}

// ifname is `iifname|oifname <name>`.
func ifname(key expr.MetaKey, name string) []expr.Any {
	data := make([]byte, unix.IFNAMSIZ) // as the kernel compares it: zero-padded
	copy(data, name)
	return []expr.Any{
		&expr.Meta{Key: key, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: data},
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
	c, err := nftables.New()
	if err != nil {
		return err
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return fmt.Errorf("list nftables tables: %w", err)
	}
	for _, t := range tables {
		if t.Name == table {
			c.DelTable(t)
			if err := c.Flush(); err != nil {
				return fmt.Errorf("delete nftables table %s: %w", table, err)
			}
			return nil
		}
	}
	return nil
}
