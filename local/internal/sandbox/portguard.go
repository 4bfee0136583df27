package sandbox

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"

	"github.com/ray-operator/ray-operator/local/internal/nftable"
)

// The port guard is a bridge-family nftables table on the machine, one per
// pod network (names.portGuardTable): frames a pod sends into the bridge
// pass only when they are IPv4 or ARP from the pod's own MAC and IPv4
// address on its own veth. A pod's root, which may hold CAP_NET_ADMIN and
// CAP_NET_RAW in the pod's network namespace, can change its address or
// send raw frames there; the guard drops frames that forge another
// address (another pod's, to take its traffic or slip past the policies
// that name it) and every IPv6 frame, which no NetworkPolicy rule judges
// (pods get no IPv6 address either: podNetnsSysctls).
//
//	table bridge <name> {
//	  set guarded { type ifname }                                  # the pods' veths
//	  set ports { type ifname . ether_addr . ipv4_addr }           # what each may send
//	  chain prerouting { type filter hook prerouting priority -200; policy accept
//	    iifname != @guarded return
//	    ether type ip iifname . ether saddr . ip saddr @ports return
//	    ether type arp iifname . ether saddr . arp saddr ip @ports return
//	    drop
//	  }
//	}
//
// Frames on ports that are not a guarded veth (another bridge's, the host's
// own) are not this table's business. Guarding a veth before it is set up
// leaves no moment when it is open.
const (
	guardedSet = "guarded"
	portsSet   = "ports"
)

// Ethernet types and the offsets the guard reads.
const (
	etherTypeIPv4 = 0x0800
	etherTypeARP  = 0x0806
)

// installPortGuard (re)creates the table.
func installPortGuard(table string) error {
	return nftable.Replace(nftables.TableFamilyBridge, table, func(c *nftables.Conn, t *nftables.Table) error {
		guarded := &nftables.Set{Table: t, Name: guardedSet, KeyType: nftables.TypeIFName}
		ports := &nftables.Set{
			Table: t, Name: portsSet, Concatenation: true,
			KeyType: nftables.MustConcatSetType(nftables.TypeIFName, nftables.TypeEtherAddr, nftables.TypeIPAddr),
		}
		if err := c.AddSet(guarded, nil); err != nil {
			return fmt.Errorf("port guard set %s: %w", guardedSet, err)
		}
		if err := c.AddSet(ports, nil); err != nil {
			return fmt.Errorf("port guard set %s: %w", portsSet, err)
		}
		nftable.AddBaseChain(c, t, "prerouting", nftables.ChainTypeFilter, nftables.ChainHookPrerouting, nftables.ChainPriorityRef(-200),
			unguardedReturn(guarded),
			portMatchReturn(ports, etherTypeIPv4, 12), // the IPv4 source address
			portMatchReturn(ports, etherTypeARP, 14),  // the ARP sender's protocol address
			[]expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}},
		)
		return nil
	})
}

// unguardedReturn is `iifname != @guarded return`.
func unguardedReturn(guarded *nftables.Set) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Lookup{SourceRegister: 1, SetName: guarded.Name, SetID: guarded.ID, Invert: true},
		&expr.Verdict{Kind: expr.VerdictReturn},
	}
}

// portMatchReturn is `ether type <etherType> iifname . ether saddr .
// <4 bytes at addrOffset of the network header> @ports return`. The
// concatenation fills the 32-bit registers from 8 on: the name 16 bytes,
// the MAC 6 (padded to 8), the address 4.
func portMatchReturn(ports *nftables.Set, etherType uint16, addrOffset uint32) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseLLHeader, Offset: 12, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{byte(etherType >> 8), byte(etherType)}},
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 8},
		&expr.Payload{DestRegister: 12, Base: expr.PayloadBaseLLHeader, Offset: 6, Len: 6},
		&expr.Payload{DestRegister: 14, Base: expr.PayloadBaseNetworkHeader, Offset: addrOffset, Len: 4},
		&expr.Lookup{SourceRegister: 8, SetName: ports.Name, SetID: ports.ID},
		&expr.Verdict{Kind: expr.VerdictReturn},
	}
}

// guardPort lets veth send as mac and ip (and nothing else).
func guardPort(table, veth string, mac net.HardwareAddr, ip netip.Addr) error {
	return changePortGuard(table, veth, func(c *nftables.Conn, guarded, ports *nftables.Set) error {
		if err := c.SetAddElements(guarded, []nftables.SetElement{{Key: nftable.IfName(veth)}}); err != nil {
			return err
		}
		return c.SetAddElements(ports, []nftables.SetElement{{Key: portKey(veth, mac, ip)}})
	})
}

// unguardPort removes what guardPort added for veth (every address it was
// given, whatever they were); a table that is gone is no error.
func unguardPort(table, veth string) error {
	exists, err := portGuardExists(table)
	if err != nil || !exists {
		return err
	}
	return changePortGuard(table, veth, func(c *nftables.Conn, guarded, ports *nftables.Set) error {
		elems, err := c.GetSetElements(ports)
		if err != nil {
			return err
		}
		name := nftable.IfName(veth)
		var mine []nftables.SetElement
		for _, e := range elems {
			if len(e.Key) >= len(name) && string(e.Key[:len(name)]) == string(name) {
				mine = append(mine, nftables.SetElement{Key: e.Key})
			}
		}
		if len(mine) > 0 {
			if err := c.SetDeleteElements(ports, mine); err != nil {
				return err
			}
		}
		present, err := c.GetSetElements(guarded)
		if err != nil {
			return err
		}
		for _, e := range present {
			if string(e.Key) == string(name) {
				return c.SetDeleteElements(guarded, []nftables.SetElement{{Key: name}})
			}
		}
		return nil
	})
}

// changePortGuard runs change on the table's two sets and flushes it.
func changePortGuard(table, veth string, change func(c *nftables.Conn, guarded, ports *nftables.Set) error) error {
	c, err := nftables.New()
	if err != nil {
		return err
	}
	t := &nftables.Table{Family: nftables.TableFamilyBridge, Name: table}
	guarded, err := c.GetSetByName(t, guardedSet)
	if err != nil {
		return fmt.Errorf("the port guard of %s: %w", veth, err)
	}
	ports, err := c.GetSetByName(t, portsSet)
	if err != nil {
		return fmt.Errorf("the port guard of %s: %w", veth, err)
	}
	if err := change(c, guarded, ports); err != nil {
		return fmt.Errorf("the port guard of %s: %w", veth, err)
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("the port guard of %s: %w", veth, err)
	}
	return nil
}

// portKey is the ports set's key of veth, mac and ip: each part padded to
// 4 bytes.
func portKey(veth string, mac net.HardwareAddr, ip netip.Addr) []byte {
	key := nftable.IfName(veth)
	key = append(key, mac...)
	key = append(key, 0, 0)
	a := ip.As4()
	return append(key, a[:]...)
}

// deletePortGuard removes the table if it exists.
func deletePortGuard(table string) error {
	return nftable.Delete(nftables.TableFamilyBridge, table)
}

// portGuardExists reports whether the machine has the table.
func portGuardExists(table string) (bool, error) {
	return nftable.Exists(nftables.TableFamilyBridge, table)
}
