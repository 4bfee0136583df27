package sandbox

import (
	"fmt"
	"net/netip"
)

// ipPool hands out the host addresses of a pod CIDR after the gateway. It
// moves a cursor forward, so that a released address is handed out again only
// after every other free one was (stale conntrack entries or ARP caches of a
// deleted pod then rarely meet a new pod). Not safe for concurrent use; Host
// holds its lock around it.
type ipPool struct {
	prefix  netip.Prefix
	gateway netip.Addr
	inUse   map[netip.Addr]bool
	cursor  netip.Addr
}

func newIPPool(prefix netip.Prefix) (*ipPool, error) {
	prefix = prefix.Masked()
	if !prefix.Addr().Is4() || prefix.Bits() > 30 {
		return nil, fmt.Errorf("pod CIDR %s: need an IPv4 prefix of /30 or larger", prefix)
	}
	gw := prefix.Addr().Next()
	return &ipPool{prefix: prefix, gateway: gw, inUse: map[netip.Addr]bool{}, cursor: gw}, nil
}

// first and last are the lowest and highest addresses a pod may get: after
// the gateway, before the broadcast address.
func (p *ipPool) first() netip.Addr { return p.gateway.Next() }

func (p *ipPool) last() netip.Addr {
	a := p.prefix.Addr().As4()
	hostBits := 32 - p.prefix.Bits()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= (uint32(1) << hostBits) - 1
	bcast := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	return bcast.Prev()
}

// allocate returns a free address, or an error when the CIDR is exhausted.
func (p *ipPool) allocate() (netip.Addr, error) {
	first, last := p.first(), p.last()
	a := p.cursor
	for {
		a = a.Next()
		if a.Compare(last) > 0 || !a.IsValid() {
			a = first
		}
		if !p.inUse[a] {
			p.inUse[a] = true
			p.cursor = a
			return a, nil
		}
		if a == p.cursor {
			return netip.Addr{}, fmt.Errorf("pod CIDR %s has no free address", p.prefix)
		}
	}
}

func (p *ipPool) release(a netip.Addr) { delete(p.inUse, a) }

// reserve marks a as allocated (an adopted pod's address).
func (p *ipPool) reserve(a netip.Addr) error {
	if a.Compare(p.first()) < 0 || a.Compare(p.last()) > 0 {
		return fmt.Errorf("address %s is not a pod address of %s", a, p.prefix)
	}
	if p.inUse[a] {
		return fmt.Errorf("address %s is taken twice", a)
	}
	p.inUse[a] = true
	return nil
}
