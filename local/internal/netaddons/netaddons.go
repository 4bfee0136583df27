// Package netaddons provides the local cluster's network add-ons, started by
// the control plane (controlplane.Addon) for pods on the node network:
// kube-proxy, which makes ClusterIP Services reachable from the host and the
// pods, and CoreDNS, which answers cluster DNS behind the kube-dns Service.
//
// Both use resources that are the machine's (kube-proxy's nftables table has
// a fixed name, CoreDNS binds port 53 on the node address), so only the
// holder of the machine-wide lock (hostlock) may start them.
package netaddons

import (
	"errors"
	"net/netip"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/local/internal/hostlock"
)

// ClusterDNSAddr is the ClusterIP of the kube-dns Service in kube-system,
// the nameserver of pods' resolv.conf.
var ClusterDNSAddr = netip.AddrFrom4([4]byte{10, 96, 0, 10})

// EnvCoreDNSBinary names the coredns executable.
const EnvCoreDNSBinary = "RAY_OPERATOR_COREDNS"

// CoreDNSVersion is the CoreDNS release the Makefile installs
// (COREDNS_VERSION); a test keeps the two in step.
const CoreDNSVersion = "v1.15.0"

// CoreDNSBinary returns the coredns executable: $RAY_OPERATOR_COREDNS, else
// the one the Makefile installs into $CACHE/tools/coredns-<CoreDNSVersion>.
func CoreDNSBinary() (string, error) {
	return controlplane.ToolBinary(EnvCoreDNSBinary, "coredns-"+CoreDNSVersion, "run `make tools` or set "+EnvCoreDNSBinary)
}

// New returns kube-proxy and CoreDNS for a control plane's NodeNetwork. It
// fails unless this process holds the machine-wide lock (hostlock.Acquire),
// which the caller takes before it makes the bridge.
func New() ([]controlplane.Addon, error) {
	if !hostlock.Held() {
		return nil, errors.New("the node network's kube-proxy and CoreDNS need the machine-wide lock: take hostlock.Acquire before making the bridge (the local cluster does)")
	}
	coredns, err := CoreDNSBinary()
	if err != nil {
		return nil, err
	}
	return []controlplane.Addon{KubeProxy{}, CoreDNS{Binary: coredns}}, nil
}
