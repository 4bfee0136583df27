package netpolicy

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// installHostChain (re)creates table (family inet) with an input chain that
// sends new connections from cidr arriving on bridge to queue: what pods
// open towards the node itself.
func installHostChain(table, bridge string, cidr netip.Prefix, queue uint16) error {
	if err := deleteTable(table); err != nil {
		return err
	}
	c, err := nftables.New()
	if err != nil {
		return err
	}
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: table})
	accept := nftables.ChainPolicyAccept
	input := c.AddChain(&nftables.Chain{
		Name: "input", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter, Policy: &accept,
	})
	c.AddRule(&nftables.Rule{Table: t, Chain: input, Exprs: establishedAccept()})
	c.AddRule(&nftables.Rule{Table: t, Chain: input, Exprs: queueFromPods(bridge, cidr, queue)})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("install nftables table %s: %w", table, err)
	}
	return nil
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

// queueFromPods is `iifname <bridge> meta nfproto ipv4 ip saddr <cidr>
// queue num <queue>`. Without the bypass flag a packet is dropped while
// nothing reads the queue, as kube-network-policies' own rules do (fail
// closed).
func queueFromPods(bridge string, cidr netip.Prefix, queue uint16) []expr.Any {
	network := cidr.Masked().Addr().As4()
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifnameData(bridge)},
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: net.CIDRMask(cidr.Bits(), 32), Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: network[:]},
		&expr.Queue{Num: queue},
	}
}

// ifnameData is an interface name as the kernel compares it: IFNAMSIZ
// bytes, zero-padded.
func ifnameData(name string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return b
}

// deleteTable removes the inet table if it exists.
func deleteTable(table string) error {
	c, err := nftables.New()
	if err != nil {
		return err
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyINet)
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
