package sandbox

import (
	"golang.org/x/sys/unix"
)

// hostNofileLimit is the RLIMIT_NOFILE containers get: nofileLimit when this
// process may raise its hard limit (CAP_SYS_RESOURCE), else its own hard
// limit, as runc could set nothing higher (container init fails with EPERM).
func hostNofileLimit() uint64 {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nofileLimit
	}
	if lim.Max >= nofileLimit || hasCapability(unix.CAP_SYS_RESOURCE) {
		return nofileLimit
	}
	return lim.Max
}

// hasCapability reports whether this process has capability c in its
// effective set.
func hasCapability(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(uint(c)%32)) != 0
}
