package exposure

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// addrPorts compares netip.AddrPort values, whose fields are unexported.
var addrPorts = cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })

// header is the first line of /proc/net/tcp.
const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

// hexWord prints four address bytes as the kernel does: one 32-bit word
// in the machine's byte order, as %08X.
func hexWord(b [4]byte) string {
	return fmt.Sprintf("%08X", binary.NativeEndian.Uint32(b[:]))
}

// hexAddr is an address in the kernel's notation.
func hexAddr(a netip.Addr) string {
	raw := a.As16()
	if a.Is4() {
		return hexWord(a.As4())
	}
	var s string
	for i := 0; i < 16; i += 4 {
		s += hexWord([4]byte(raw[i : i+4]))
	}
	return s
}

// line is one socket of a /proc/net/tcp table.
func line(local netip.AddrPort, state, inode string) string {
	return "   0: " + hexAddr(local.Addr()) + fmt.Sprintf(":%04X", local.Port()) +
		" 00000000:0000 " + state + " 00000000:00000000 00:00000000 00000000     0        0 " + inode + " 1 0000000000000000 100 0 0 10 0\n"
}

func TestParseTCP(t *testing.T) {
	ap := netip.MustParseAddrPort
	tests := map[string]struct {
		table string
		want  []Listener
	}{
		"IPv4 listeners, others left out": {
			table: header +
				line(ap("127.0.0.1:8080"), "0A", "101") +
				line(ap("10.244.0.1:6443"), "0A", "102") +
				line(ap("0.0.0.0:22"), "0A", "103") +
				line(ap("10.0.0.5:40000"), "01", "104"), // established
			want: []Listener{
				{Addr: ap("127.0.0.1:8080"), Inode: 101},
				{Addr: ap("10.244.0.1:6443"), Inode: 102},
				{Addr: ap("0.0.0.0:22"), Inode: 103},
			},
		},
		"IPv6, IPv4-mapped unmapped": {
			table: header +
				line(ap("[::1]:9443"), "0A", "201") +
				line(ap("[::]:10256"), "0A", "202") +
				line(ap("[::ffff:127.0.0.1]:53"), "0A", "203") +
				line(ap("[fd00::1:2]:80"), "0A", "204"),
			want: []Listener{
				{Addr: ap("[::1]:9443"), Inode: 201},
				{Addr: ap("[::]:10256"), Inode: 202},
				{Addr: ap("127.0.0.1:53"), Inode: 203},
				{Addr: ap("[fd00::1:2]:80"), Inode: 204},
			},
		},
		"header only": {table: header},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTCP(strings.NewReader(tc.table))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, addrPorts); diff != "" {
				t.Errorf("ParseTCP (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseTCPKernelNotation pins the notation on a line as this machine's
// kernel prints it: 127.0.0.1:8080 is 0100007F:1F90 on little-endian
// machines.
func TestParseTCPKernelNotation(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the sample is a little-endian kernel's")
	}
	table := header + "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0\n" +
		"   1: 0000000000000000FFFF00000100000A:01BB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4243 1 0 100 0 0 10 0\n"
	got, err := ParseTCP(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	want := []Listener{{Addr: netip.MustParseAddrPort("127.0.0.1:8080"), Inode: 4242}, {Addr: netip.MustParseAddrPort("10.0.0.1:443"), Inode: 4243}}
	if diff := cmp.Diff(want, got, addrPorts); diff != "" {
		t.Errorf("ParseTCP (-want +got):\n%s", diff)
	}
}

func TestParseTCPRejectsMalformed(t *testing.T) {
	for name, local := range map[string]string{
		"not hex":          "0100007G:1F90",
		"no port":          "0100007F",
		"wrong length":     "01000:1F90",
		"port not hex":     "0100007F:ZZ",
		"port beyond 16 b": "0100007F:1FFFF",
	} {
		t.Run(name, func(t *testing.T) {
			table := header + "   0: " + local + " 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n"
			if got, err := ParseTCP(strings.NewReader(table)); err == nil {
				t.Errorf("ParseTCP = %v, want an error", got)
			}
		})
	}
}

// TestHeldByFindsOwnListener listens on 127.0.0.1 and expects HeldBy to
// find that socket held by this process, and nothing of a process that
// holds none.
func TestHeldByFindsOwnListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	want := netip.MustParseAddrPort(l.Addr().String())
	found, err := HeldBy([]int{os.Getpid()})
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	i := slices.IndexFunc(found, func(l Listener) bool { return l.Addr == want })
	if i < 0 {
		t.Fatalf("HeldBy(self) = %v, want %v among them", found, want)
	}
	if found[i].PID != os.Getpid() || found[i].Command == "" {
		t.Errorf("listener %v: PID %d command %q, want PID %d and a command", want, found[i].PID, found[i].Command, os.Getpid())
	}
	if none, _ := HeldBy([]int{-1}); len(none) > 0 {
		t.Errorf("HeldBy(no process) = %v", none)
	}
}

func TestBeyond(t *testing.T) {
	ap := netip.MustParseAddrPort
	bridge := netip.MustParseAddr("10.244.0.1")
	ls := []Listener{
		{Addr: ap("127.0.0.1:1")}, {Addr: ap("127.0.0.53:2")}, {Addr: ap("[::1]:3")}, {Addr: ap("10.244.0.1:4")},
		{Addr: ap("0.0.0.0:5")}, {Addr: ap("[::]:6")}, {Addr: ap("192.168.1.2:7")}, {Addr: ap("10.244.0.2:8")},
	}
	var got []string
	for _, l := range Beyond(ls, bridge) {
		got = append(got, l.Addr.String())
	}
	want := []string{"0.0.0.0:5", "[::]:6", "192.168.1.2:7", "10.244.0.2:8"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Beyond (-want +got):\n%s", diff)
	}
}
