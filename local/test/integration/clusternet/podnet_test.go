package clusternet_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// podNetwork is a test bridge with pod-like network namespaces on it: what
// the local node's sandboxes set up for real, reduced to what the cluster
// network needs. Its names and range differ from the local node's
// (rayop0, 10.244.0.0/24) so that both can exist on one host.
type podNetwork struct {
	bridge  string
	gateway netip.Prefix // the bridge's address, with the pod range's length
}

// Kernel settings pods on a bridge need from the host: forwarding, because
// a pod's packet to a ClusterIP is routed by the host to the endpoint after
// DNAT; bridge-nf-call-iptables, because the endpoint's reply to a pod on the
// same bridge is bridged, and only netfilter on the bridge undoes the DNAT.
var podNetworkSysctls = map[string]string{
	"/proc/sys/net/ipv4/ip_forward":                "1",
	"/proc/sys/net/bridge/bridge-nf-call-iptables": "1",
}

// newPodNetwork creates bridge name with address gateway and the kernel
// settings pods need; cleanup removes the bridge and restores the settings.
func newPodNetwork(t *testing.T, name string, gateway netip.Prefix) *podNetwork {
	t.Helper()
	_ = deleteLink(name) // left by a killed run
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := netlink.LinkAdd(br); err != nil {
		t.Fatalf("creating bridge %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := deleteLink(name); err != nil {
			t.Errorf("deleting bridge %s: %v", name, err)
		}
	})
	if err := netlink.AddrAdd(br, &netlink.Addr{IPNet: ipNet(gateway)}); err != nil {
		t.Fatalf("addressing bridge %s: %v", name, err)
	}
	if err := netlink.LinkSetUp(br); err != nil {
		t.Fatalf("bringing bridge %s up: %v", name, err)
	}
	for path, value := range podNetworkSysctls {
		setSysctl(t, path, value)
	}
	return &podNetwork{bridge: name, gateway: gateway}
}

// setSysctl writes value to path and restores the old value at cleanup.
func setSysctl(t *testing.T, path, value string) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Errorf("restoring %s: %v", path, err)
		}
	})
}

// pod is a network namespace with eth0 on the bridge.
type pod struct {
	name string
	ip   netip.Addr
	ns   netns.NsHandle
}

// addPod creates named network namespace name with a veth pair: eth0 inside
// with address ip and a default route through the bridge, the other end
// (also called name) on the bridge in hairpin mode. Cleanup removes both.
func (pn *podNetwork) addPod(t *testing.T, name string, ip netip.Addr) *pod {
	t.Helper()
	_ = deleteLink(name)
	_ = netns.DeleteNamed(name)
	ns, err := newNamedNetns(name)
	if err != nil {
		t.Fatalf("creating network namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = ns.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("deleting network namespace %s: %v", name, err)
		}
	})
	if err := pn.plugVeth(name, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteLink(name) }) // gone with the namespace already, normally
	if err := configurePodSide(ns, netip.PrefixFrom(ip, pn.gateway.Bits()), pn.gateway.Addr()); err != nil {
		t.Fatalf("configuring pod %s: %v", name, err)
	}
	return &pod{name: name, ip: ip, ns: ns}
}

// plugVeth creates the veth pair of a pod: name on the bridge, eth0 in ns.
func (pn *podNetwork) plugVeth(name string, ns netns.NsHandle) error {
	br, err := netlink.LinkByName(pn.bridge)
	if err != nil {
		return fmt.Errorf("finding bridge %s: %w", pn.bridge, err)
	}
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: name, MasterIndex: br.Attrs().Index},
		PeerName:      "eth0",
		PeerNamespace: netlink.NsFd(ns),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("creating veth %s: %w", name, err)
	}
	if err := netlink.LinkSetHairpin(veth, true); err != nil {
		return fmt.Errorf("hairpin mode on %s: %w", name, err)
	}
	if err := netlink.LinkSetUp(veth); err != nil {
		return fmt.Errorf("bringing %s up: %w", name, err)
	}
	return nil
}

// configurePodSide addresses eth0 in ns, brings it and lo up and routes
// everything through gateway.
func configurePodSide(ns netns.NsHandle, addr netip.Prefix, gateway netip.Addr) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	lo, err := h.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := h.AddrAdd(eth0, &netlink.Addr{IPNet: ipNet(addr)}); err != nil {
		return err
	}
	for _, link := range []netlink.Link{lo, eth0} {
		if err := h.LinkSetUp(link); err != nil {
			return err
		}
	}
	return h.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: net.IP(gateway.AsSlice())})
}

// newNamedNetns creates network namespace name (as `ip netns add` does)
// and returns a handle to it, leaving the caller's namespace unchanged.
func newNamedNetns(name string) (netns.NsHandle, error) {
	var ns netns.NsHandle
	err := onLockedThread(func() error {
		var err error
		ns, err = netns.NewNamed(name) // switches this thread into it
		return err
	})
	return ns, err
}

// in runs f on an OS thread inside the pod's network namespace, so that
// sockets f creates (listeners, connections) belong to the pod.
func (p *pod) in(f func() error) error {
	return onLockedThread(func() error {
		if err := netns.Set(p.ns); err != nil {
			return fmt.Errorf("entering %s: %w", p.name, err)
		}
		return f()
	})
}

// onLockedThread runs f on a goroutine locked to its thread and moves the
// thread back to this process's network namespace afterwards. Should that
// fail, the thread stays locked and ends with the goroutine, so that no
// other goroutine runs in the wrong namespace.
func onLockedThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		host, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		defer func() { _ = host.Close() }()
		errc <- f()
		if netns.Set(host) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return <-errc
}

// dialIn is a DialContext that dials from inside the pod.
func (p *pod) dialIn(ctx context.Context, network, address string) (net.Conn, error) {
	var conn net.Conn
	err := p.in(func() error {
		var err error
		conn, err = (&net.Dialer{}).DialContext(ctx, network, address)
		return err
	})
	return conn, err
}

// deleteLink deletes the link called name.
func deleteLink(name string) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return err
	}
	return netlink.LinkDel(link)
}

// ipNet converts an address with its prefix length.
func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// checkNoLeftovers fails unless the bridge and the pods' links and
// namespaces are gone.
func checkNoLeftovers(names ...string) error {
	var errs []error
	for _, name := range names {
		if _, err := netlink.LinkByName(name); err == nil {
			errs = append(errs, fmt.Errorf("link %s remains", name))
		}
		if _, err := os.Stat("/var/run/netns/" + name); err == nil {
			errs = append(errs, fmt.Errorf("network namespace %s remains", name))
		}
	}
	return errors.Join(errs...)
}
