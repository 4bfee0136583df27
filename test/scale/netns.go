package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
)

// The rayjob-binary kind gives every head Pod an address of its own out of
// benchPodCIDR (one kwok node subnet each) and answers all of them on this
// machine: the benchmark runs in a network namespace of its own, where an
// AnyIP route makes every address of benchPodCIDR local, so one dashboard
// server listening on 0.0.0.0:dashboardPort takes every connection to any
// Pod's dashboard, and nothing on the host's own network changes.
const (
	benchPodCIDR  = "10.128.0.0/12"
	dashboardPort = 8265
	// netnsEnv marks the benchmark process re-executed in its own
	// network namespace.
	netnsEnv = "RAY_OPERATOR_BENCH_NETNS"
)

// needsNetns says whether a run of kinds needs the benchmark's own network
// namespace.
func needsNetns(kinds []string) bool { return slices.Contains(kinds, kindRayJobBinary) }

// enterNetns re-executes this command in a new network namespace (unshare
// --net, as root), unless it already runs in one; it returns only when it
// does. In there it brings the loopback up and routes benchPodCIDR to it.
func enterNetns() error {
	if os.Getenv(netnsEnv) == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			return fmt.Errorf("the rayjob-binary kind runs in a network namespace of its own: %w", err)
		}
		args := append([]string{"unshare", "--net", "--", self}, os.Args[1:]...)
		return syscall.Exec(unshare, args, append(os.Environ(), netnsEnv+"=1")) //nolint:gosec // re-executes this very command
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"route", "add", "local", benchPodCIDR, "dev", "lo"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v in the benchmark's network namespace: %w\n%s", args, err, out)
		}
	}
	return nil
}
