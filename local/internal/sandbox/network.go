package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/vishvananda/netlink"
)

// Network is the machine's side of the pods' network: the bridge with the
// gateway address, the nftables table that masquerades pod traffic leaving
// through another interface and accepts forwarding to and from the bridge,
// the port guard that holds every pod to its own addresses (portguard.go),
// and the kernel settings pod traffic needs (net.ipv4.ip_forward=1,
// net.bridge.bridge-nf-call-iptables=1, restored by the last network on the
// machine to close, see sysctlRegistry). A Host makes its own unless
// HostConfig.ExternalNetwork says that another process made it with
// NewNetwork, as the local cluster does for its node process.
type Network struct {
	bridge  string
	cidr    netip.Prefix
	gateway netip.Addr
	names   names
	sysctls sysctlRegistry
	owners  ownerRegistry
	log     logr.Logger

	mu         sync.Mutex
	sysctlsSet bool // registered with sysctls
	closed     bool
}

// deadSweepTimeout bounds the sweep of dead hosts' leftovers at a
// network's start (see ownerRegistry).
const deadSweepTimeout = 2 * time.Minute

// NewNetwork records itself on the machine, sweeping what hosts whose
// processes died left (see ownerRegistry), removes the bridge and nftables
// table an earlier run with the same StateDir and BridgeName left (their
// pods' veths, namespaces and containers are the node's to sweep, see
// NewHost) and sets the network up again. It reads StateDir, BridgeName,
// PodCIDR and Log of cfg.
func NewNetwork(cfg HostConfig) (*Network, error) {
	cfg, err := networkDefaults(cfg)
	if err != nil {
		return nil, err
	}
	return newNetwork(cfg, false)
}

// newNetwork sets up the network of cfg (completed) after removing an
// earlier one's nftables table and, unless keepBridge (an adopting host
// kept pods whose veths are on it), its bridge.
func newNetwork(cfg HostConfig, keepBridge bool) (*Network, error) {
	pool, err := newIPPool(cfg.PodCIDR)
	if err != nil {
		return nil, err
	}
	n := &Network{
		bridge: cfg.BridgeName, cidr: cfg.PodCIDR, gateway: pool.gateway,
		names:   newNames(cfg.StateDir, cfg.BridgeName),
		sysctls: sysctlRegistry{dir: defaultSysctlRegistryDir, settings: hostSysctls},
		owners:  defaultOwners(cfg.Log),
		log:     cfg.Log,
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadSweepTimeout)
	defer cancel()
	if err := n.owners.enter(ctx, cfg, roleNetwork); err != nil {
		return nil, fmt.Errorf("recording the pod network on the machine: %w", err)
	}
	if err := n.sweep(keepBridge); err != nil {
		return nil, errors.Join(fmt.Errorf("sweep the pod network an earlier run left: %w", err), n.owners.leave(n.names, roleNetwork))
	}
	if err := n.setUp(); err != nil {
		return nil, errors.Join(err, n.Close())
	}
	return n, nil
}

// networkDefaults completes the fields of cfg a Network reads.
func networkDefaults(cfg HostConfig) (HostConfig, error) {
	if err := checkStateDir(&cfg); err != nil {
		return cfg, err
	}
	if cfg.BridgeName == "" {
		cfg.BridgeName = DefaultBridgeName
	}
	if !cfg.PodCIDR.IsValid() {
		cfg.PodCIDR = DefaultPodCIDR
	}
	cfg.PodCIDR = cfg.PodCIDR.Masked()
	return cfg, nil
}

// sweep removes an earlier network's nftables table and, unless
// keepBridge, its bridge.
func (n *Network) sweep(keepBridge bool) error {
	var errs []error
	if !keepBridge {
		errs = append(errs, deleteLinkIfExists(n.bridge))
	}
	return errors.Join(append(errs, deleteNftTable(n.names.nftTable()), deletePortGuard(n.names.portGuardTable()))...)
}

// setUp makes the bridge (keeping one that exists), registers with the
// kernel settings and installs the nftables table.
func (n *Network) setUp() error {
	if _, err := setupBridge(n.bridge, n.gateway, n.cidr); err != nil {
		return err
	}
	n.mu.Lock()
	n.sysctlsSet = true
	n.mu.Unlock()
	if err := n.sysctls.acquire(n.names.tag); err != nil {
		return err
	}
	if err := installNftTable(n.names.nftTable(), n.bridge, n.cidr); err != nil {
		return err
	}
	return installPortGuard(n.names.portGuardTable())
}

// Gateway is the bridge address: the node's InternalIP, where DNS listens.
func (n *Network) Gateway() netip.Addr { return n.gateway }

// Bridge is the name of the pods' bridge.
func (n *Network) Bridge() string { return n.bridge }

// PodCIDR is the prefix pod addresses come from.
func (n *Network) PodCIDR() netip.Prefix { return n.cidr }

// Close removes the nftables table and the bridge (with whatever veths are
// still on it) and gives the kernel settings back to the machine when no
// other network on it still runs. It is idempotent.
func (n *Network) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	sysctlsSet := n.sysctlsSet
	n.mu.Unlock()
	errs := []error{deleteNftTable(n.names.nftTable()), deletePortGuard(n.names.portGuardTable()), deleteLinkIfExists(n.bridge)}
	if sysctlsSet {
		errs = append(errs, n.sysctls.release(n.names.tag))
	}
	if err := errors.Join(errs...); err != nil {
		return err // recorded still, for a later start to sweep
	}
	return n.owners.leave(n.names, roleNetwork)
}

// checkExternalNetwork fails unless the bridge of a network made by another
// process is there.
func checkExternalNetwork(bridge string) error {
	link, err := netlink.LinkByName(bridge)
	if err != nil {
		return fmt.Errorf("the pod network's bridge %s (HostConfig.ExternalNetwork: NewNetwork makes it): %w", bridge, err)
	}
	if link.Type() != "bridge" {
		return fmt.Errorf("link %s is a %s, not a bridge", bridge, link.Type())
	}
	return nil
}
