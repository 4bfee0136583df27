package sandbox

import (
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"

	"github.com/ray-operator/ray-operator/local/internal/nftable"
)

// installNftTable (re)creates the host's table (family ip): a postrouting NAT
// chain that masquerades pod traffic leaving through any interface but the
// bridge, and a forward filter chain that accepts traffic to and from the
// bridge (other tables may still drop it; ours only adds no obstacle).
func installNftTable(table, bridge string, cidr netip.Prefix) error {
	return nftable.Replace(nftables.TableFamilyIPv4, table, func(c *nftables.Conn, t *nftables.Table) error {
		nftable.AddBaseChain(c, t, "postrouting", nftables.ChainTypeNAT, nftables.ChainHookPostrouting, nftables.ChainPriorityNATSource,
			masqueradeExprs(bridge, cidr))
		nftable.AddBaseChain(c, t, "forward", nftables.ChainTypeFilter, nftables.ChainHookForward, nftables.ChainPriorityFilter,
			ifnameAccept(expr.MetaKeyIIFNAME, bridge), ifnameAccept(expr.MetaKeyOIFNAME, bridge))
		return nil
	})
}

// masqueradeExprs is `ip saddr <cidr> oifname != <bridge> masquerade`.
func masqueradeExprs(bridge string, cidr netip.Prefix) []expr.Any {
	return nftable.Join(nftable.InPrefix(nftable.IPv4SourceOffset, cidr), []expr.Any{
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: nftable.IfName(bridge)},
		&expr.Masq{},
	})
}

// ifnameAccept is `iifname|oifname <name> accept`.
func ifnameAccept(key expr.MetaKey, name string) []expr.Any {
	return nftable.Join(nftable.IfNameIs(key, name), []expr.Any{&expr.Verdict{Kind: expr.VerdictAccept}})
}

// deleteNftTable removes the table (family ip) if it exists.
func deleteNftTable(table string) error {
	return nftable.Delete(nftables.TableFamilyIPv4, table)
}

// nftTableExists reports whether the host has the table (family ip).
func nftTableExists(table string) (bool, error) {
	return nftable.Exists(nftables.TableFamilyIPv4, table)
}
