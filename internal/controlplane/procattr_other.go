//go:build !linux

package controlplane

import "syscall"

// procAttr puts a component in its own process group, so that stopping it
// stops whatever it started. Only Linux can also tie its life to ours.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
