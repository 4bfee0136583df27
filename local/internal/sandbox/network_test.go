package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// tcpServer is a python3 server that answers every connection with a line
// naming itself, after printing "listening".
func tcpServer(bind string, port int, reply string) string {
	return fmt.Sprintf(`exec python3 -u -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("%s", %d))
s.listen()
print("listening")
while True:
    c, _ = s.accept()
    c.sendall(b"%s\n")
    c.close()
'`, bind, port, reply)
}

// tcpClient reads one line from ip:port with bash's /dev/tcp, giving up
// after 20 s (rather than after the kernel's SYN retries).
func tcpClient(ip string, port int) string {
	return fmt.Sprintf(`exec timeout 20 bash -c 'exec 3<>/dev/tcp/%s/%d && head -n1 <&3'`, ip, port)
}

func TestPodNetworking(t *testing.T) {
	h := newTestHost(t, 2)
	ctx := testContext(t, 2*time.Minute)
	a, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-a", Namespace: "ns", Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-b", Namespace: "ns", Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !h.PodCIDR().Contains(a.IP()) || a.IP() == h.Gateway() || a.IP() == b.IP() {
		t.Fatalf("pod IPs %s and %s: want distinct addresses in %s other than the gateway %s", a.IP(), b.IP(), h.PodCIDR(), h.Gateway())
	}
	_, serverOut, serverErr := startBash(t, a, "server", tcpServer("0.0.0.0", 8080, "hello from a"))
	if err := serverOut.waitFor(ctx, "listening"); err != nil {
		t.Fatalf("%v; stderr: %s", err, serverErr)
	}
	_, localOut, localErr := startBash(t, a, "local", tcpServer("127.0.0.1", 9090, "loopback of a"))
	if err := localOut.waitFor(ctx, "listening"); err != nil {
		t.Fatalf("%v; stderr: %s", err, localErr)
	}

	t.Run("pod to pod by IP", func(t *testing.T) {
		c, out, stderr := startBash(t, b, "client", tcpClient(a.IP().String(), 8080))
		if code := waitDone(ctx, t, c, stderr); code != 0 || out.String() != "hello from a\n" {
			t.Errorf("client in b = %d, %q; want 0, %q; stderr: %s", code, out, "hello from a\n", stderr)
		}
	})
	t.Run("pod to itself by its own IP (hairpin)", func(t *testing.T) {
		c, out, stderr := startBash(t, a, "self", tcpClient(a.IP().String(), 8080))
		if code := waitDone(ctx, t, c, stderr); code != 0 || out.String() != "hello from a\n" {
			t.Errorf("client in a = %d, %q; stderr: %s", code, out, stderr)
		}
	})
	t.Run("host to pod IP", func(t *testing.T) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.IP().String(), "8080"))
		if err != nil {
			t.Fatal(err)
		}
		assertLine(t, conn, "hello from a")
	})
	t.Run("DialContext reaches a server on the pod's loopback", func(t *testing.T) {
		conn, err := a.DialContext(ctx, "tcp", "localhost:9090")
		if err != nil {
			t.Fatal(err)
		}
		assertLine(t, conn, "loopback of a")
		if _, err := b.DialContext(ctx, "tcp", "localhost:9090"); err == nil {
			t.Error("DialContext from b reached a's loopback server")
		}
	})
	t.Run("pod to the outside world is masqueraded", func(t *testing.T) {
		outside := newOutsideNetwork(t, 2)
		c, out, stderr := startBash(t, b, "egress", tcpClient(outside.serverIP.String(), outside.port))
		code := waitDone(ctx, t, c, stderr)
		host, _, _ := net.SplitHostPort(strings.TrimSpace(out.String()))
		if code != 0 || host != outside.hostIP.String() {
			t.Errorf("egress client = %d, %q; want 0 and the server seeing the host's address %s; stderr: %s", code, out, outside.hostIP, stderr)
		}
	})
}

func assertLine(t *testing.T, conn net.Conn, want string) {
	t.Helper()
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if strings.TrimSpace(line) != want {
		t.Errorf("read %q, want %q", line, want)
	}
}

// outsideNetwork is a network namespace standing for the world beyond the
// host: a /30 on a veth to the host, no route to the pod CIDR, and a TCP
// server that answers with the address it sees the client at. A pod reaches
// it only if the host masquerades.
type outsideNetwork struct {
	hostIP, serverIP netip.Addr
	port             int
}

func newOutsideNetwork(t *testing.T, k int) outsideNetwork {
	t.Helper()
	name := "rsbo-" + shortHash(t.Name(), 6)
	o := outsideNetwork{
		hostIP:   netip.AddrFrom4([4]byte{198, 18, byte(k), 1}),
		serverIP: netip.AddrFrom4([4]byte{198, 18, byte(k), 2}),
	}
	ns, err := newNamedNetns(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = deleteLinkIfExists(name)
		if err := deleteNetns(name); err != nil {
			t.Error(err)
		}
	})
	defer ns.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(ns))}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	link, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.AddrAdd(link, &netlink.Addr{IPNet: ipNet(o.hostIP, 30)}); err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		t.Fatal(err)
	}
	nh, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer nh.Close()
	eth0, err := nh.LinkByName("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if err := nh.AddrAdd(eth0, &netlink.Addr{IPNet: ipNet(o.serverIP, 30)}); err != nil {
		t.Fatal(err)
	}
	if err := nh.LinkSetUp(eth0); err != nil {
		t.Fatal(err)
	}
	ln := listenInNetns(t, ns, net.JoinHostPort(o.serverIP.String(), "0"))
	o.port = ln.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = fmt.Fprintln(conn, conn.RemoteAddr().String())
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return o
}

// listenInNetns opens a TCP listener inside ns.
func listenInNetns(t *testing.T, ns netns.NsHandle, address string) net.Listener {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		// The goroutine ends locked if it cannot go back, which ends the
		// thread with it.
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer origin.Close()
		if err := netns.Set(ns); err != nil {
			done <- result{err: err}
			return
		}
		var lc net.ListenConfig
		ln, err := lc.Listen(context.Background(), "tcp", address)
		if err := netns.Set(origin); err != nil {
			done <- result{err: err}
			return
		}
		runtime.UnlockOSThread()
		done <- result{ln: ln, err: err}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.ln
}

// TestExternalNetwork: a host on a network that NewNetwork made (as the
// local cluster makes it for its node process) runs pods on its bridge and
// leaves the network in place when it closes; a host without that bridge
// refuses to start; closing the network leaves nothing.
func TestExternalNetwork(t *testing.T) {
	cfg := testHostConfig(t, 16)
	ctx := testContext(t, 2*time.Minute)
	cfg.ExternalNetwork = true
	if _, err := NewHost(ctx, cfg); err == nil || !strings.Contains(err.Error(), "NewNetwork") {
		t.Fatalf("NewHost with an external network that does not exist: %v, want an error naming NewNetwork", err)
	}
	network, err := NewNetwork(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := network.Close(); err != nil {
			t.Errorf("Network.Close: %v", err)
		}
		assertNothingLeft(t, cfg)
	})
	for i := range 2 {
		h, err := NewHost(ctx, cfg)
		if err != nil {
			t.Fatalf("host %d: %v", i, err)
		}
		if h.Gateway() != network.Gateway() {
			t.Errorf("host gateway %s, network's %s", h.Gateway(), network.Gateway())
		}
		sb, err := h.CreateSandbox(ctx, SandboxSpec{UID: fmt.Sprintf("uid-%d", i), Namespace: "ns", Name: "a"})
		if err != nil {
			t.Fatal(err)
		}
		_, out, stderr := startBash(t, sb, "server", tcpServer("0.0.0.0", 8080, "hello"))
		if err := out.waitFor(ctx, "listening"); err != nil {
			t.Fatalf("%v; stderr: %s", err, stderr)
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(sb.IP().String(), "8080"))
		if err != nil {
			t.Fatalf("host %d: the machine cannot reach its pod: %v", i, err)
		}
		assertLine(t, conn, "hello")
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
		names := newNames(cfg.StateDir, cfg.BridgeName)
		if exists, err := nftTableExists(names.nftTable()); err != nil || !exists {
			t.Errorf("host %d closed: nftables table %s exists %v (%v), want it kept", i, names.nftTable(), exists, err)
		}
		if _, err := netlink.LinkByName(cfg.BridgeName); err != nil {
			t.Errorf("host %d closed: bridge %s: %v, want it kept", i, cfg.BridgeName, err)
		}
	}
}

// TestPodsKeepToTheirOwnAddresses: a pod gets no IPv6 address on eth0, and
// the port guard drops what a pod's root (with CAP_NET_ADMIN in its
// namespace) sends from an address that is not its own: a connection from
// a second address it gave itself never reaches another pod, which keeps
// answering the pod's own address.
func TestPodsKeepToTheirOwnAddresses(t *testing.T) {
	h := newTestHost(t, 3)
	ctx := testContext(t, 2*time.Minute)
	a, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-a", Namespace: "ns", Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-b", Namespace: "ns", Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	// b's server prints the address of every peer it accepts.
	_, served, serverErr := startBash(t, b, "server", `exec python3 -u -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8080))
s.listen()
print("listening")
while True:
    c, peer = s.accept()
    print("peer", peer[0])
    c.sendall(b"hello\n")
    c.close()
'`)
	if err := served.waitFor(ctx, "listening"); err != nil {
		t.Fatalf("%v; stderr: %s", err, serverErr)
	}

	inet6, out, stderr := startBash(t, a, "inet6", "cat /proc/net/if_inet6")
	if code := waitDone(ctx, t, inet6, stderr); code != 0 || strings.Contains(out.String(), "eth0") {
		t.Errorf("a's IPv6 addresses (%d): %q; want none on eth0", code, out)
	}

	// a gives itself a second address and connects to b from it (bound
	// as the source), then from its own.
	forged := netip.AddrFrom4([4]byte{10, 250, 3, 200})
	connect := func(src string) string {
		return fmt.Sprintf(`python3 -c '
import socket, sys
s = socket.socket()
s.settimeout(5)
s.bind(("%s", 0))
try:
    s.connect(("%s", 8080)); print("connected", s.recv(16).decode().strip())
except OSError as e:
    print("refused", e)
'`, src, b.IP())
	}
	netAdmin := func(c *ContainerSpec) { c.CapAdd = []string{"NET_ADMIN"} }
	spoof, out, stderr := startBash(t, a, "spoof", fmt.Sprintf("ip addr add %s/32 dev eth0 && %s && %s", forged, connect(forged.String()), connect(a.IP().String())), netAdmin)
	if code := waitDone(ctx, t, spoof, stderr); code != 0 {
		t.Fatalf("the spoofing container exited %d: %q; stderr: %s", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "refused") || lines[1] != "connected hello" {
		t.Errorf("from the forged address, then its own, a got %q; want refused, then connected hello", lines)
	}
	if err := served.waitFor(ctx, "peer "+a.IP().String()); err != nil {
		t.Fatalf("b never served a's own address: %v; b printed %q", err, served)
	}
	if strings.Contains(served.String(), "peer "+forged.String()) {
		t.Errorf("b accepted a connection from the forged address %s: %q", forged, served)
	}
}
