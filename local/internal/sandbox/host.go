package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// Defaults of HostConfig.
const (
	DefaultBridgeName = "rayop0"
	DefaultRuncBinary = "runc"
)

// DefaultPodCIDR is the pod CIDR when HostConfig.PodCIDR is unset.
var DefaultPodCIDR = netip.MustParsePrefix("10.244.0.0/16")

// HostConfig configures a Host.
type HostConfig struct {
	// StateDir is required; everything the host keeps on disk lives under it
	// (pods/<uid>/..., runc/ for runc's state), except the machine-wide
	// record of kernel settings under /run/ray-operator-sandbox and of the
	// processes running hosts under /run/ray-local/owners.
	StateDir string
	// BridgeName is the Linux bridge of the pods; default "rayop0".
	BridgeName string
	// PodCIDR is where pod addresses come from; default 10.244.0.0/16. The
	// gateway (bridge) address is its first host address.
	PodCIDR netip.Prefix
	// RuncBinary is the runc executable; default "runc" looked up on PATH.
	RuncBinary string
	// ConmonBinary is the container monitor; default "conmon" looked up on
	// PATH.
	ConmonBinary string
	// ExternalNetwork says that another process made the pods' network
	// (bridge, nftables table, kernel settings) with NewNetwork and owns
	// it: the host runs pods on that bridge and neither sweeps nor removes
	// it. By default the host makes its own, as NewNetwork does, and
	// removes it on Close.
	ExternalNetwork bool
	// Adopt takes over the sandboxes and containers an earlier host with
	// the same StateDir and BridgeName left running (its process died, or
	// it was closed with Detach): Sandboxes lists them. Without it, and
	// for whatever cannot be adopted, NewHost sweeps them away.
	Adopt bool
	// Log receives what the host does and what it fails to clean up.
	Log logr.Logger
	// Clock stamps container start and finish times; default the real clock.
	Clock clock.PassiveClock
}

// Host owns every sandbox of one local node and, unless its network is
// external, the pods' network (see Network).
type Host struct {
	cfg     HostConfig
	owners  ownerRegistry
	names   names
	runc    runcCLI
	monitor monitorPaths
	exits   *exitWatcher
	spawner *spawner
	gateway netip.Addr
	nofile  uint64 // RLIMIT_NOFILE of containers

	mu        sync.Mutex
	network   *Network // the host's own network; nil when external
	pool      *ipPool
	ids       *idRanges
	sandboxes map[string]*Sandbox
	detached  chan struct{} // closed by Detach
	closed    bool
}

// NewHost records itself on the machine, sweeping what hosts whose
// processes died left under other state directories (see ownerRegistry);
// it sweeps what an earlier run under the same StateDir and BridgeName
// left behind (runc containers, cgroups, mounts under StateDir, pod network
// namespaces and veths) or, with Adopt, what it does not adopt of that;
// then, unless the network is external, it sets up the pods' network as
// NewNetwork does (keeping the bridge when it adopted pods on it).
func NewHost(ctx context.Context, cfg HostConfig) (*Host, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	pool, err := newIPPool(cfg.PodCIDR)
	if err != nil {
		return nil, err
	}
	h := &Host{
		cfg:       cfg,
		owners:    defaultOwners(cfg.Log),
		names:     newNames(cfg.StateDir, cfg.BridgeName),
		runc:      runcCLI{binary: cfg.RuncBinary, root: filepath.Join(cfg.StateDir, "runc")},
		monitor:   newNames(cfg.StateDir, cfg.BridgeName).monitorPaths(),
		gateway:   pool.gateway,
		nofile:    hostNofileLimit(),
		pool:      pool,
		ids:       newIDRanges(),
		sandboxes: map[string]*Sandbox{},
		detached:  make(chan struct{}),
	}
	if err := h.owners.enter(ctx, cfg, roleHost); err != nil {
		return nil, fmt.Errorf("recording the host on the machine: %w", err)
	}
	kept, err := h.takeOver(ctx)
	if err != nil {
		return nil, errors.Join(err, h.owners.leave(h.names, roleHost))
	}
	h.spawner = newSpawner()
	if err := h.setUpNetwork(kept.any()); err != nil {
		return nil, errors.Join(err, h.Close(ctx))
	}
	cfg.Log.Info("Host ready", "bridge", cfg.BridgeName, "gateway", h.gateway, "podCIDR", cfg.PodCIDR, "containerNofile", h.nofile)
	return h, nil
}

// takeOver sweeps what an earlier host with the same names left or, with
// Adopt, adopts its intact sandboxes and sweeps the rest; either way it
// leaves the run directory and the exit watcher ready. It returns what it
// adopted.
func (h *Host) takeOver(ctx context.Context) (adopted, error) {
	if err := os.MkdirAll(filepath.Join(h.cfg.StateDir, "pods"), 0o755); err != nil {
		return adopted{}, err
	}
	if !h.cfg.Adopt {
		if err := h.sweep(ctx, adopted{}); err != nil {
			return adopted{}, fmt.Errorf("sweep what an earlier run left: %w", err)
		}
	}
	if err := makeRunDir(h.names.runDir()); err != nil {
		return adopted{}, err
	}
	if err := h.monitor.make(); err != nil {
		return adopted{}, err
	}
	var err error
	if h.exits, err = newExitWatcher(h.monitor.exitDir); err != nil {
		return adopted{}, err
	}
	if !h.cfg.Adopt {
		return adopted{}, nil
	}
	kept := h.adopt()
	if err := h.sweep(ctx, kept); err != nil {
		return kept, fmt.Errorf("sweep what an earlier run left and this host did not adopt: %w", err)
	}
	return kept, nil
}

func withDefaults(cfg HostConfig) (HostConfig, error) {
	cfg, err := networkDefaults(cfg)
	if err != nil {
		return cfg, err
	}
	if cfg.RuncBinary == "" {
		cfg.RuncBinary = DefaultRuncBinary
	}
	runc, err := exec.LookPath(cfg.RuncBinary)
	if err != nil {
		return cfg, fmt.Errorf("runc: %w", err)
	}
	cfg.RuncBinary = runc
	if cfg.ConmonBinary == "" {
		cfg.ConmonBinary = DefaultConmonBinary
	}
	conmon, err := exec.LookPath(cfg.ConmonBinary)
	if err != nil {
		return cfg, fmt.Errorf("conmon (apt-get install conmon): %w", err)
	}
	cfg.ConmonBinary = conmon
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return cfg, nil
}

// setUpNetwork checks the external network's bridge or makes the host's
// own network, keeping the bridge an earlier host left if keepBridge.
func (h *Host) setUpNetwork(keepBridge bool) error {
	if h.cfg.ExternalNetwork {
		return checkExternalNetwork(h.cfg.BridgeName)
	}
	n, err := newNetwork(h.cfg, keepBridge)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.network = n
	h.mu.Unlock()
	return nil
}

// checkStateDir requires cfg.StateDir to be absolute and cleans it.
func checkStateDir(cfg *HostConfig) error {
	if cfg.StateDir == "" || !filepath.IsAbs(cfg.StateDir) {
		return fmt.Errorf("HostConfig.StateDir must be an absolute path, got %q", cfg.StateDir)
	}
	cfg.StateDir = filepath.Clean(cfg.StateDir)
	return nil
}

// Gateway is the bridge address: the node's InternalIP, where DNS listens.
func (h *Host) Gateway() netip.Addr { return h.gateway }

// Bridge is the name of the pods' bridge.
func (h *Host) Bridge() string { return h.cfg.BridgeName }

// PodCIDR is the prefix pod addresses come from.
func (h *Host) PodCIDR() netip.Prefix { return h.cfg.PodCIDR }

// Detach lets go of the host and stops nothing: its sandboxes and
// containers run on, for a later host with Adopt to take over, as
// containers run on when a kubelet stops. Its record on the machine stays
// (see ownerRegistry): what it leaves is kept for adoption while this
// process runs, and swept by the next start on the machine after. The host
// cannot be used after.
func (h *Host) Detach() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.mu.Unlock()
	close(h.detached)
	err := h.exits.close()
	h.spawner.stop()
	h.cfg.Log.Info("Host detached: its sandboxes and containers run on", "sandboxes", len(h.Sandboxes()))
	return err
}

// Close destroys every sandbox and everything NewHost made. The kernel
// settings go back to the machine's own values when no other host on the
// machine (in any process) still runs. It is idempotent.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	sandboxes := make([]*Sandbox, 0, len(h.sandboxes))
	for _, s := range h.sandboxes {
		sandboxes = append(sandboxes, s)
	}
	network := h.network
	h.mu.Unlock()

	var errs []error
	for _, s := range sandboxes {
		errs = append(errs, s.Destroy(ctx))
	}
	if h.exits != nil {
		errs = append(errs, h.exits.close())
	}
	if network != nil {
		errs = append(errs, network.Close())
	}
	errs = append(errs,
		removeCgroupTree(ctx, h.names.cgroupParent()),
		removeUnmounted(h.runc.root),
		removeRunDir(h.names.runDir()),
	)
	if err := errors.Join(errs...); err == nil {
		// Whatever failed to go stays recorded, for a later start to sweep.
		errs = append(errs, h.owners.leave(h.names, roleHost))
	}
	if h.spawner != nil {
		h.spawner.stop()
	}
	err := errors.Join(errs...)
	h.cfg.Log.Info("Host closed", "bridge", h.cfg.BridgeName, "error", err)
	return err
}
