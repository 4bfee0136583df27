// Package nftable sets up the local node's nftables tables: each is
// replaced whole (any table of its name removed, then the table, its sets,
// chains and rules added in one batch), removed if it exists, or looked up;
// and it builds the matches their rules share. The sandbox's pod-network
// tables (the NAT and forward table, the port guard) and the network-policy
// dataplane each own a table and use it.
package nftable

import (
	"errors"
	"fmt"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// Replace (re)creates the table name of family: it removes a table of
// that name (one an earlier run left included), then adds the table and
// what add puts in it, and commits them in one batch.
func Replace(family nftables.TableFamily, name string, add func(c *nftables.Conn, t *nftables.Table) error) error {
	if err := Delete(family, name); err != nil {
		return err
	}
	c, err := nftables.New()
	if err != nil {
		return err
	}
	t := c.AddTable(&nftables.Table{Family: family, Name: name})
	if err := add(c, t); err != nil {
		return err
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("install nftables table %s %s: %w", familyName(family), name, err)
	}
	return nil
}

// AddBaseChain adds to t the chain name of type typ on hook at priority,
// with the policy accept (what the node's tables do not match passes on to
// the other tables), and rules, in order.
func AddBaseChain(c *nftables.Conn, t *nftables.Table, name string, typ nftables.ChainType, hook *nftables.ChainHook,
	priority *nftables.ChainPriority, rules ...[]expr.Any) *nftables.Chain {
	accept := nftables.ChainPolicyAccept
	chain := c.AddChain(&nftables.Chain{Name: name, Table: t, Type: typ, Hooknum: hook, Priority: priority, Policy: &accept})
	for _, exprs := range rules {
		c.AddRule(&nftables.Rule{Table: t, Chain: chain, Exprs: exprs})
	}
	return chain
}

// Delete removes the table name of family if it exists.
func Delete(family nftables.TableFamily, name string) error {
	exists, err := Exists(family, name)
	if err != nil || !exists {
		return err
	}
	c, err := nftables.New()
	if err != nil {
		return err
	}
	c.DelTable(&nftables.Table{Family: family, Name: name})
	if err := c.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete nftables table %s %s: %w", familyName(family), name, err)
	}
	return nil
}

// Exists reports whether the host has the table name of family.
func Exists(family nftables.TableFamily, name string) (bool, error) {
	c, err := nftables.New()
	if err != nil {
		return false, err
	}
	tables, err := c.ListTablesOfFamily(family)
	if err != nil {
		return false, fmt.Errorf("list nftables tables of family %s: %w", familyName(family), err)
	}
	for _, t := range tables {
		if t.Name == name {
			return true, nil
		}
	}
	return false, nil
}

// familyName is family as nft names it.
func familyName(family nftables.TableFamily) string {
	switch family {
	case nftables.TableFamilyIPv4:
		return "ip"
	case nftables.TableFamilyIPv6:
		return "ip6"
	case nftables.TableFamilyINet:
		return "inet"
	case nftables.TableFamilyBridge:
		return "bridge"
	case nftables.TableFamilyARP:
		return "arp"
	case nftables.TableFamilyNetdev:
		return "netdev"
	}
	return fmt.Sprintf("family %d", family)
}
