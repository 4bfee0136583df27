package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// installNftTable (re)creates the host's table (family ip): a postrouting NAT
// chain that masquerades pod traffic leaving through any interface but the
// bridge, and a forward filter chain that accepts traffic to and from the
// bridge (other tables may still drop it; ours only adds no obstacle).
func installNftTable(table, bridge string, cidr netip.Prefix) error {
	if err := deleteNftTable(table); err != nil {
		return err
	}
	c, err := nftables.New()
	if err != nil {
		return err
	}
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: table})
	accept := nftables.ChainPolicyAccept
	nat := c.AddChain(&nftables.Chain{
		Name: "postrouting", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource, Policy: &accept,
	})
	fwd := c.AddChain(&nftables.Chain{
		Name: "forward", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter, Policy: &accept,
	})
	c.AddRule(&nftables.Rule{Table: t, Chain: nat, Exprs: masqueradeExprs(bridge, cidr)})
	c.AddRule(&nftables.Rule{Table: t, Chain: fwd, Exprs: ifnameAccept(expr.MetaKeyIIFNAME, bridge)})
	c.AddRule(&nftables.Rule{Table: t, Chain: fwd, Exprs: ifnameAccept(expr.MetaKeyOIFNAME, bridge)})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("install nftables table %s: %w", table, err)
	}
	return nil
}

// masqueradeExprs is `ip saddr <cidr> oifname != <bridge> masquerade`.
func masqueradeExprs(bridge string, cidr netip.Prefix) []expr.Any {
	mask := net.CIDRMask(cidr.Bits(), 32)
	network := cidr.Masked().Addr().As4()
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: network[:]},
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: ifnameData(bridge)},
		&expr.Masq{},
	}
}

// ifnameAccept is `iifname|oifname <name> accept`.
func ifnameAccept(key expr.MetaKey, name string) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: key, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifnameData(name)},
		&expr.Verdict{Kind: expr.VerdictAccept},
	}
}

// ifnameData is an interface name as the kernel compares it: IFNAMSIZ bytes,
// zero-padded.
func ifnameData(name string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return b
}

// deleteNftTable removes the table (family ip) if it exists.
func deleteNftTable(table string) error {
	return deleteTableOf(nftables.TableFamilyIPv4, table)
}

// nftTableExists reports whether the host has the table (family ip).
func nftTableExists(table string) (bool, error) {
	return tableExists(nftables.TableFamilyIPv4, table)
}

// deleteTableOf removes the table of family if it exists.
func deleteTableOf(family nftables.TableFamily, table string) error {
	exists, err := tableExists(family, table)
	if err != nil || !exists {
		return err
	}
	c, err := nftables.New()
	if err != nil {
		return err
	}
	c.DelTable(&nftables.Table{Family: family, Name: table})
	if err := c.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete nftables table %s: %w", table, err)
	}
	return nil
}

// tableExists reports whether the host has the table of family.
func tableExists(family nftables.TableFamily, table string) (bool, error) {
	c, err := nftables.New()
	if err != nil {
		return false, err
	}
	tables, err := c.ListTablesOfFamily(family)
	if err != nil {
		return false, err
	}
	for _, t := range tables {
		if t.Name == table {
			return true, nil
		}
	}
	return false, nil
}
