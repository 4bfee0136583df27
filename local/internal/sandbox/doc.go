// Package sandbox is the host side of the local node: a Linux bridge with a
// pod CIDR, one network namespace and IP per pod, and containers run by
// runc, each under its own conmon (which outlives this process), whose root
// filesystem is an overlay of the host's root.
//
// It provides mechanism only. The node agent decides which container runs
// when, restarts and probes them; this package creates and destroys pod
// sandboxes, starts containers in them and cleans up after them, and sweeps
// what a crashed earlier run under the same state directory left behind.
//
// Every name this package gives to a host object (network namespace, veth,
// cgroup, nftables table) carries a tag derived from the state directory and
// bridge name, so that several hosts (tests, colleagues' agents) can share a
// machine without sweeping each other's objects.
package sandbox
