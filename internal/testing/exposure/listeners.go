package exposure

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A Listener is a TCP socket in the LISTEN state.
type Listener struct {
	// Addr is the local address; IPv4-mapped IPv6 addresses are unmapped.
	Addr netip.AddrPort
	// Inode names the socket: /proc/<pid>/fd links to socket:[Inode].
	Inode uint64
	// PID and Command are the process that holds the socket, when known.
	PID     int
	Command string
}

// String is the listener as `ss -ltnp` would show it.
func (l Listener) String() string {
	return fmt.Sprintf("%s pid=%d (%s)", l.Addr, l.PID, l.Command)
}

// tcpListen is the state column's value for a listening socket
// (TCP_LISTEN in include/net/tcp_states.h).
const tcpListen = "0A"

// ParseTCP reads a /proc/net/tcp or /proc/net/tcp6 table and returns its
// listening sockets, without PID or Command.
func ParseTCP(r io.Reader) ([]Listener, error) {
	var found []Listener
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		if len(fields) < 10 || fields[0] == "sl" || fields[3] != tcpListen {
			continue
		}
		l, err := parseSocket(fields[1], fields[9])
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", scanner.Text(), err)
		}
		found = append(found, l)
	}
	return found, scanner.Err()
}

// parseSocket reads a local_address column and an inode column.
func parseSocket(local, inode string) (Listener, error) {
	addr, err := parseHexAddrPort(local)
	if err != nil {
		return Listener{}, err
	}
	ino, err := strconv.ParseUint(inode, 10, 64)
	if err != nil {
		return Listener{}, fmt.Errorf("inode %q: %w", inode, err)
	}
	return Listener{Addr: addr, Inode: ino}, nil
}

// parseHexAddrPort reads "0100007F:1F90" (127.0.0.1:8080). The kernel
// prints the address as 32-bit words in the machine's byte order, each as
// %08X, and the port as a number.
func parseHexAddrPort(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(host)
	if !ok || err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("address %q is not hex IPv4 or IPv6:port", s)
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port of %q: %w", s, err)
	}
	for word := raw; len(word) > 0; word = word[4:] {
		binary.NativeEndian.PutUint32(word, binary.BigEndian.Uint32(word))
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(p)), nil
}

// HeldBy returns the listening TCP sockets of this process's network
// namespace that one of pids holds, each with the first of them found.
// Processes that exit meanwhile are left out.
func HeldBy(pids []int) ([]Listener, error) {
	byInode, err := listeningHere()
	if err != nil {
		return nil, err
	}
	var found []Listener
	for _, pid := range pids {
		for _, ino := range socketInodes(pid) {
			l, ok := byInode[ino]
			if !ok {
				continue
			}
			delete(byInode, ino)
			l.PID, l.Command = pid, command(pid)
			found = append(found, l)
		}
	}
	slices.SortFunc(found, func(a, b Listener) int { return a.Addr.Compare(b.Addr) })
	return found, nil
}

// listeningHere reads /proc/net/tcp and tcp6 (this network namespace's)
// and maps each listening socket's inode to it.
func listeningHere() (map[uint64]Listener, error) {
	byInode := map[uint64]Listener{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if errors.Is(err, os.ErrNotExist) && table == "/proc/net/tcp6" {
			continue // IPv6 disabled
		}
		if err != nil {
			return nil, err
		}
		ls, err := ParseTCP(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", table, err)
		}
		for _, l := range ls {
			byInode[l.Inode] = l
		}
	}
	return byInode, nil
}

// socketInodes lists the inodes of the sockets pid holds open.
func socketInodes(pid int) []uint64 {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var inodes []uint64
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(target, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				inodes = append(inodes, ino)
			}
		}
	}
	return inodes
}

// command is the process's name (/proc/<pid>/comm).
func command(pid int) string {
	comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(comm))
}

// Beyond returns the listeners bound to an address that is neither a
// loopback address nor one of addrs. A wildcard address (0.0.0.0, ::)
// listens on every address, so it is always beyond.
func Beyond(ls []Listener, addrs ...netip.Addr) []Listener {
	var out []Listener
	for _, l := range ls {
		a := l.Addr.Addr()
		if !a.IsLoopback() && !slices.Contains(addrs, a) {
			out = append(out, l)
		}
	}
	return out
}
