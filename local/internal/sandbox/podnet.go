package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// podNetwork describes one pod's network namespace and veth pair.
type podNetwork struct {
	netns   string // name under /run/netns
	veth    string // host end, on the bridge
	bridge  string
	ip      netip.Addr
	gateway netip.Addr
	bits    int
	// guard is the port guard's table (portguard.go), which lets the veth
	// send from the pod's MAC and address only.
	guard string
	// ids and userns: the namespace is made owned by the pod's user
	// namespace, bind-mounted at userns, unless ids are host users'.
	ids    idMap
	userns string
}

// create makes the namespace, the veth pair (host end on the bridge with
// hairpin on, peer eth0 in the namespace with the bridge's MTU and a MAC
// of the pod's address), guards the port (before it is up), then the pod's
// address, lo up and the default route via the gateway.
func (p podNetwork) create() error {
	br, err := netlink.LinkByName(p.bridge)
	if err != nil {
		return fmt.Errorf("look up bridge %s: %w", p.bridge, err)
	}
	ns, err := p.newNetns()
	if err != nil {
		return err
	}
	defer ns.Close()
	mtu := br.Attrs().MTU
	mac := podMAC(p.ip)
	veth := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: p.veth, MTU: mtu, MasterIndex: br.Attrs().Index},
		PeerName:         "eth0",
		PeerHardwareAddr: mac,
		PeerNamespace:    netlink.NsFd(int(ns)),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("create veth %s: %w", p.veth, err)
	}
	if err := guardPort(p.guard, p.veth, mac, p.ip); err != nil {
		return err
	}
	host, err := netlink.LinkByName(p.veth)
	if err != nil {
		return fmt.Errorf("look up veth %s: %w", p.veth, err)
	}
	if err := netlink.LinkSetHairpin(host, true); err != nil {
		return fmt.Errorf("hairpin on %s: %w", p.veth, err)
	}
	if err := netlink.LinkSetUp(host); err != nil {
		return fmt.Errorf("set %s up: %w", p.veth, err)
	}
	return p.configureInside(ns, mtu)
}

// configureInside sets up lo and eth0 through a netlink handle bound to the
// pod's namespace, without moving any thread into it.
func (p podNetwork) configureInside(ns netns.NsHandle, mtu int) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netlink in netns %s: %w", p.netns, err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("set lo up in %s: %w", p.netns, err)
	}
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	if err := h.LinkSetMTU(eth0, mtu); err != nil {
		return fmt.Errorf("MTU of eth0 in %s: %w", p.netns, err)
	}
	if err := h.AddrAdd(eth0, &netlink.Addr{IPNet: ipNet(p.ip, p.bits)}); err != nil {
		return fmt.Errorf("address %s in %s: %w", p.ip, p.netns, err)
	}
	if err := h.LinkSetUp(eth0); err != nil {
		return fmt.Errorf("set eth0 up in %s: %w", p.netns, err)
	}
	route := &netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: net.IP(p.gateway.AsSlice())}
	if err := h.RouteAdd(route); err != nil {
		return fmt.Errorf("default route via %s in %s: %w", p.gateway, p.netns, err)
	}
	return nil
}

// newNetns makes the pod's network namespace: owned by its user namespace,
// which it makes too, unless the pod has host users.
func (p podNetwork) newNetns() (netns.NsHandle, error) {
	if !p.ids.mapped {
		return newNamedNetns(p.netns)
	}
	if err := holdNamespaces(p.ids, p.userns, p.netns); err != nil {
		return netns.None(), err
	}
	path := filepath.Join(netnsDir, p.netns)
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return netns.None(), fmt.Errorf("open netns %s: %w", path, err)
	}
	if err := inNetns(ns, writeNetnsSysctls); err != nil {
		return netns.None(), errors.Join(err, ns.Close())
	}
	return ns, nil
}

// inNetns runs fn on a thread moved into ns, and moves it back; if that
// fails, the thread stays locked so that Go ends it with this goroutine.
func inNetns(ns netns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	origin, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current netns: %w", err)
	}
	defer origin.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns: %w", err)
	}
	err = fn()
	if restoreErr := netns.Set(origin); restoreErr != nil {
		return errors.Join(err, fmt.Errorf("return to the host netns: %w", restoreErr))
	}
	runtime.UnlockOSThread()
	return err
}

// destroy deletes the veth pair (at once; a namespace's own teardown is
// asynchronous), its port guard and then the namespace.
func (p podNetwork) destroy() error {
	return errors.Join(deleteLinkIfExists(p.veth), unguardPort(p.guard, p.veth), deleteNetns(p.netns))
}

// podMAC is the MAC of a pod's eth0: locally administered, with the pod's
// address in its last four bytes, as Docker gives its containers.
func podMAC(ip netip.Addr) net.HardwareAddr {
	a := ip.As4()
	return net.HardwareAddr{0x02, 0x42, a[0], a[1], a[2], a[3]}
}

// reguard guards the port of an adopted pod again (a network set up anew
// has an empty guard), with the MAC its eth0 has.
func (p podNetwork) reguard() error {
	ns, err := netns.GetFromPath(filepath.Join(netnsDir, p.netns))
	if err != nil {
		return fmt.Errorf("open netns %s: %w", p.netns, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netlink in netns %s: %w", p.netns, err)
	}
	defer h.Close()
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		return fmt.Errorf("eth0 in netns %s: %w", p.netns, err)
	}
	return guardPort(p.guard, p.veth, eth0.Attrs().HardwareAddr, p.ip)
}

// newNamedNetns creates a network namespace bind-mounted under /run/netns
// and applies podNetnsSysctls in it.
// netns.NewNamed moves the calling thread into the new namespace; the thread
// is moved back before it is unlocked, and if that fails it stays locked so
// that Go ends it with this goroutine.
func newNamedNetns(name string) (netns.NsHandle, error) {
	runtime.LockOSThread()
	origin, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return netns.None(), fmt.Errorf("current netns: %w", err)
	}
	defer origin.Close()
	ns, err := netns.NewNamed(name)
	if err == nil {
		err = writeNetnsSysctls()
	}
	if restoreErr := netns.Set(origin); restoreErr != nil {
		return netns.None(), errors.Join(err, fmt.Errorf("return to the host netns: %w", restoreErr))
	}
	runtime.UnlockOSThread()
	if err != nil {
		return netns.None(), fmt.Errorf("create netns %s: %w", name, err)
	}
	return ns, nil
}

// dialInNetns dials address from inside the named namespace. The socket is
// made on a thread moved into the namespace; once made, it works from any
// thread. Names are resolved first (in the host's view, which for localhost
// is the pod's too), and each address is dialed in this goroutine, so that no
// helper goroutine of the dialer makes its socket on another thread.
func dialInNetns(ctx context.Context, nsPath, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return nil, fmt.Errorf("open netns %s: %w", nsPath, err)
	}
	defer ns.Close()
	runtime.LockOSThread()
	origin, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer origin.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("enter netns %s: %w", nsPath, err)
	}
	conn, err := dialEach(ctx, network, addrs, port)
	if restoreErr := netns.Set(origin); restoreErr != nil {
		// Leave the thread locked: Go ends it with this goroutine.
		if conn != nil {
			_ = conn.Close()
		}
		return nil, fmt.Errorf("return to the host netns: %w", restoreErr)
	}
	runtime.UnlockOSThread()
	return conn, err
}

// dialEach dials the addresses in order and returns the first connection.
func dialEach(ctx context.Context, network string, addrs []netip.Addr, port string) (net.Conn, error) {
	d := net.Dialer{FallbackDelay: -1}
	var errs []error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// podNetnsSysctls are set in every pod's network namespace, as container
// runtimes do: a user namespace's root, which holds no capability over a
// namespace the host made, may still bind ports below 1024 and ping. And
// IPv6 is off on the interfaces made after the namespace (eth0; lo keeps
// ::1): the cluster is IPv4 only, and NetworkPolicies judge IPv4 alone, so
// a pod gets no link-local IPv6 address to reach others by (the port guard
// drops IPv6 frames besides).
var podNetnsSysctls = map[string]string{
	"net/ipv4/ip_unprivileged_port_start": "0",
	"net/ipv4/ping_group_range":           "0 2147483647",
	ipv6DefaultOff:                        "1",
}

// ipv6DefaultOff is the setting that makes new interfaces of a namespace
// IPv6-less; a kernel without IPv6 does not have it, nor need it.
const ipv6DefaultOff = "net/ipv6/conf/default/disable_ipv6"

// writeNetnsSysctls writes podNetnsSysctls through /proc/sys, which shows the
// calling thread's network namespace.
func writeNetnsSysctls() error {
	for key, value := range podNetnsSysctls {
		if key == ipv6DefaultOff {
			if _, err := os.Stat("/proc/sys/net/ipv6"); errors.Is(err, os.ErrNotExist) {
				continue
			}
		}
		if err := os.WriteFile("/proc/sys/"+key, []byte(value), 0o644); err != nil {
			return fmt.Errorf("sysctl %s in the pod's netns: %w", key, err)
		}
	}
	return nil
}
