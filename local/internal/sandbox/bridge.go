package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// setupBridge creates the bridge, gives it the gateway address and sets it
// up; a bridge an adopted host left (with its pods' veths on it) is kept.
func setupBridge(name string, gateway netip.Addr, cidr netip.Prefix) (netlink.Link, error) {
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := netlink.LinkAdd(br); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("create bridge %s: %w", name, err)
	}
	link, err := netlink.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("look up bridge %s: %w", name, err)
	}
	if link.Type() != "bridge" {
		return nil, fmt.Errorf("link %s is a %s, not a bridge", name, link.Type())
	}
	addr := &netlink.Addr{IPNet: ipNet(gateway, cidr.Bits())}
	if err := netlink.AddrAdd(link, addr); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("address %s on bridge %s: %w", addr.IPNet, name, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return nil, fmt.Errorf("set bridge %s up: %w", name, err)
	}
	return link, nil
}

// deleteLinkIfExists deletes the named link; a missing link is no error.
func deleteLinkIfExists(name string) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up link %s: %w", name, err)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("delete link %s: %w", name, err)
	}
	return nil
}

func ipNet(a netip.Addr, bits int) *net.IPNet {
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(bits, a.BitLen())}
}

// listLinks lists the host's links. A dump that links changed under (pods
// being deleted meanwhile) is retried, as the kernel flags it incomplete.
func listLinks() ([]netlink.Link, error) {
	var err error
	for range 10 {
		var links []netlink.Link
		links, err = netlink.LinkList()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			return links, err
		}
	}
	return nil, err
}
