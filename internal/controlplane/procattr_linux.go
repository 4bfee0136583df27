package controlplane

import "syscall"

// procAttr puts a component in its own process group, so that stopping it
// stops whatever it started, and has the kernel kill it if this process dies
// first (even by SIGKILL or a test timeout).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
