package nftable

import (
	"net"
	"net/netip"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// Offsets of the addresses in the IPv4 header.
const (
	IPv4SourceOffset      = 12
	IPv4DestinationOffset = 16
)

// Join is the rule whose expressions are those of parts, in order.
func Join(parts ...[]expr.Any) []expr.Any {
	var all []expr.Any
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

// IfName is an interface name as the kernel compares it: IFNAMSIZ bytes,
// zero-padded.
func IfName(name string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return b
}

// IfNameIs is `iifname|oifname <name>` (key MetaKeyIIFNAME or
// MetaKeyOIFNAME).
func IfNameIs(key expr.MetaKey, name string) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: key, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: IfName(name)},
	}
}

// InPrefix is `ip saddr|daddr <cidr>` (offset IPv4SourceOffset or
// IPv4DestinationOffset).
func InPrefix(offset uint32, cidr netip.Prefix) []expr.Any {
	network := cidr.Masked().Addr().As4()
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: net.CIDRMask(cidr.Bits(), 32), Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: network[:]},
	}
}
