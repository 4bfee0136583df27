// Package netprobe is what tests run inside a pod to find out whether the
// pod's network lets a connection through: a Python script (the Ray image's
// python, or the host's python3 in a pod of the local node) that prints one
// verdict.
package netprobe

import (
	"net"
	"net/netip"
	"strconv"
	"testing"
)

// Verdicts the script prints.
const (
	// Connected: a TCP connection was established.
	Connected = "connected"
	// Answered: a UDP datagram (an echo, or a DNS query) got an answer.
	Answered = "answered"
	// Timeout: nothing came back within a second, as when a packet is
	// dropped. Anything else ("error ...": refused, unreachable) is not a
	// drop.
	Timeout = "timeout"
)

// script connects (tcp), sends "ping" and waits for a datagram back (udp),
// or asks a DNS server for the A record of a name (dns), with a one-second
// timeout.
const script = `
import socket, struct, sys
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if mode == "tcp" else socket.SOCK_DGRAM)
s.settimeout(1.0)
try:
    if mode == "tcp":
        s.connect((host, port))
        print("connected")
    else:
        msg = b"ping"
        if mode == "dns":
            qname = b"".join(bytes([len(l)]) + l.encode() for l in sys.argv[4].strip(".").split(".")) + b"\0"
            msg = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + qname + struct.pack(">HH", 1, 1)
        s.sendto(msg, (host, port))
        s.recv(512)
        print("answered")
except socket.timeout:
    print("timeout")
except OSError as e:
    print("error", e)
`

// TCP is the command that connects to addr.
func TCP(python string, addr netip.AddrPort) []string {
	return command(python, "tcp", addr)
}

// UDP is the command that sends a datagram to addr and waits for one back.
func UDP(python string, addr netip.AddrPort) []string {
	return command(python, "udp", addr)
}

// DNS is the command that asks the DNS server at addr for name's A record.
func DNS(python string, addr netip.AddrPort, name string) []string {
	return append(command(python, "dns", addr), name)
}

func command(python, mode string, addr netip.AddrPort) []string {
	return []string{python, "-c", script, mode, addr.Addr().String(), strconv.Itoa(int(addr.Port()))}
}

// ListenTCP accepts and closes TCP connections on addr (any port) until the
// test ends, and returns where it listens: the host end a probe connects to.
func ListenTCP(t testing.TB, addr netip.Addr) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}
