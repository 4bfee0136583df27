package e2eutil

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/local/internal/netaddons"
)

// What a node dump reads of the cluster's logs, and how long one DNS
// question may take.
const (
	coreDNSLogLines   = 80
	kubeProxyLogLines = 40
	dnsProbeTimeout   = 3 * time.Second
	// dnsProbeServices bounds how many of the namespace's Services are
	// asked for: when DNS is down, each question takes dnsProbeTimeout.
	dnsProbeServices = 4
)

// kubernetesServiceName is the name every pod resolves first.
const kubernetesServiceName = "kubernetes.default.svc." + controlplane.ClusterDomain

// Dump prints what a failed test's namespace holds (Kube.Dump), then
// what the node's network looked like (NodeDump): a test that timed out
// on Pods unable to resolve names shows why.
func (s *Suite) Dump(ctx context.Context, t testing.TB, ns string) {
	s.Kube.Dump(ctx, t, ns)
	t.Logf("node and cluster network:\n%s", s.NodeDump(ctx, ns))
}

// NodeDump describes the node's Pods and the cluster's network as the
// host sees it: every Pod with its phase and IP; the answers of cluster
// DNS for the kubernetes Service and ns's Services (a few of every
// namespace's for ns ""), asked at the kube-dns
// Service address and at CoreDNS's own; the tails of CoreDNS's and
// kube-proxy's logs; kube-proxy's nftables table; the bridge's addresses
// and state, its ports and its neighbour entries.
func (s *Suite) NodeDump(ctx context.Context, ns string) string {
	var out strings.Builder
	s.dumpNodePods(ctx, &out)
	s.dumpDNS(ctx, &out, ns)
	fmt.Fprintf(&out, "--- CoreDNS log (last %d lines):\n%s", coreDNSLogLines, tailFile(filepath.Join(s.StateDir, "coredns.log"), coreDNSLogLines))
	fmt.Fprintf(&out, "--- kube-proxy log (last %d lines):\n%s", kubeProxyLogLines, tailFile(filepath.Join(s.StateDir, "kube-proxy.log"), kubeProxyLogLines))
	fmt.Fprintf(&out, "--- nft list table ip %s:\n%s", netaddons.KubeProxyTable, command(ctx, "nft", "list", "table", "ip", netaddons.KubeProxyTable))
	if n := s.Cluster.Network; n != nil {
		fmt.Fprintf(&out, "--- bridge %s (gateway %s, pods %s):\n%s", n.Bridge(), n.Gateway(), n.PodCIDR(), command(ctx, "ip", "-d", "address", "show", "dev", n.Bridge()))
		// Its ports and the neighbours it resolved: a Pod whose veth is
		// gone, or two Pods on one address, show here.
		fmt.Fprintf(&out, "--- ports of %s:\n%s", n.Bridge(), command(ctx, "ip", "-br", "link", "show", "master", n.Bridge()))
		fmt.Fprintf(&out, "--- neighbours on %s:\n%s", n.Bridge(), command(ctx, "ip", "neigh", "show", "dev", n.Bridge()))
	}
	return out.String()
}

// dumpNodePods lists every Pod of the cluster with its phase and IP.
func (s *Suite) dumpNodePods(ctx context.Context, out *strings.Builder) {
	pods := &corev1.PodList{}
	if err := s.Client.List(ctx, pods); err != nil {
		fmt.Fprintf(out, "--- Pods: %v\n", err)
		return
	}
	fmt.Fprintf(out, "--- Pods (%d):\n", len(pods.Items))
	for _, p := range pods.Items {
		fmt.Fprintf(out, "%s/%s: %s, IP %q, node %q, deleting %v\n", p.Namespace, p.Name, p.Status.Phase, p.Status.PodIP, p.Spec.NodeName, p.DeletionTimestamp != nil)
	}
}

// dumpDNS asks cluster DNS for the kubernetes Service's name and each of
// ns's Services, at the kube-dns Service address (through kube-proxy's
// rules) and at CoreDNS's own (the node's address).
func (s *Suite) dumpDNS(ctx context.Context, out *strings.Builder, ns string) {
	names := []string{kubernetesServiceName}
	services := &corev1.ServiceList{}
	if err := s.Client.List(ctx, services, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(out, "--- Services of %s: %v\n", ns, err)
	}
	for _, svc := range services.Items[:min(len(services.Items), dnsProbeServices)] {
		names = append(names, svc.Name+"."+svc.Namespace+".svc."+controlplane.ClusterDomain)
	}
	servers := []netip.AddrPort{netip.AddrPortFrom(netaddons.ClusterDNSAddr, 53)}
	if n := s.Cluster.Network; n != nil {
		servers = append(servers, netip.AddrPortFrom(n.Gateway(), 53))
	}
	fmt.Fprintln(out, "--- cluster DNS from the host:")
	for _, server := range servers {
		for _, name := range names {
			fmt.Fprintf(out, "%s @%s: %s\n", name, server, ProbeDNS(ctx, server, name))
		}
	}
}

// ProbeDNS asks server (over UDP, as a Pod's resolver does) for name's
// addresses and returns them, or the error, with how long the answer
// took.
func ProbeDNS(ctx context.Context, server netip.AddrPort, name string) string {
	ctx, cancel := context.WithTimeout(ctx, dnsProbeTimeout)
	defer cancel()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", server.String())
	}}
	began := time.Now()
	addrs, err := r.LookupHost(ctx, name)
	took := time.Since(began).Round(time.Millisecond)
	if err != nil {
		return fmt.Sprintf("error after %v: %v", took, err)
	}
	return fmt.Sprintf("%s in %v", strings.Join(addrs, ", "), took)
}

// tailFile is the last n lines of the file at path, or why it cannot be
// read.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)\n", err)
	}
	lines := bytes.SplitAfter(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, nil)) + "\n"
}

// command runs name with args and returns what it printed, with its error
// if it failed.
func command(ctx context.Context, name string, args ...string) string {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s(%s %s: %v)\n", out, name, strings.Join(args, " "), err)
	}
	return string(out)
}

// timeoutDumpLead is how long before go test's -timeout ends the package
// the suite prints NodeDump: a test killed by the timeout runs no cleanup,
// so it prints no dump of its own.
const timeoutDumpLead = time.Minute

// dumpBeforeTimeout schedules dump lead before timeout (go test's
// -timeout, which starts with m.Run) ends; the caller stops the timer when
// the tests are done. No timeout, or one not longer than lead, schedules
// nothing (nil).
func dumpBeforeTimeout(timeout, lead time.Duration, dump func()) *time.Timer {
	if timeout <= lead {
		return nil
	}
	return time.AfterFunc(timeout-lead, dump)
}

// testTimeout is go test's -timeout for this binary; 0 when it has none.
func testTimeout() time.Duration {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return 0
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if d, ok := g.Get().(time.Duration); ok {
			return d
		}
	}
	return 0
}

// printNodeDump prints NodeDump for the whole cluster, for a package
// about to be stopped by its timeout.
func (s *Suite) printNodeDump() {
	ctx, cancel := context.WithTimeout(context.Background(), timeoutDumpLead/2)
	defer cancel()
	fmt.Printf("%s: go test's -timeout ends the package in %v; the node and cluster network now:\n%s", s.opts.Name, timeoutDumpLead, s.NodeDump(ctx, ""))
}
