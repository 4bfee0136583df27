// Package exposure tells what a set of processes exposes on this host: the
// TCP sockets they listen on, read from /proc as `ss -ltnp` shows them, and
// the files of a state directory that others than their owner may read. The
// local cluster's tests use it to check that the cluster listens on
// loopback and its bridge address only and keeps keys, tokens and
// kubeconfigs to root. It reads Linux's /proc.
package exposure
