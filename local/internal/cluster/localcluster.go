// Package localcluster starts a whole Kubernetes cluster on this machine
// whose pods are real processes: a bridge with a pod network
// (sandbox.Network), the local control plane with cluster DNS, kube-proxy
// and metrics-server on that network, a NetworkPolicy enforcer
// (kube-network-policies), and the local node, a process of its own as a
// kubelet is, that runs the pods scheduled to it.
// `make run` and the end-to-end suites that run real Ray use it; Stop, or
// canceling the context given to Start, takes it all down again.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/local/internal/certmanager"
	"github.com/ray-operator/ray-operator/local/internal/hostlock"
	"github.com/ray-operator/ray-operator/local/internal/kueue"
	"github.com/ray-operator/ray-operator/local/internal/localpv"
	"github.com/ray-operator/ray-operator/local/internal/metricsserver"
	"github.com/ray-operator/ray-operator/local/internal/netaddons"
	"github.com/ray-operator/ray-operator/local/internal/netpolicy"
	"github.com/ray-operator/ray-operator/local/internal/node"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
	"github.com/ray-operator/ray-operator/local/internal/traefik"
)

// DefaultNodeName is the name of the local node.
const DefaultNodeName = "ray-local"

// VolumeDir is where the cluster's provisioner keeps the persistent
// volumes' directories, one per volume, named after it.
func VolumeDir(stateDir string) string { return filepath.Join(stateDir, "volumes") }

// SeccompDir is where the node of a cluster with stateDir reads the
// seccomp profiles of pods with seccompProfile type Localhost.
func SeccompDir(stateDir string) string { return filepath.Join(stateDir, "seccomp") }

// Options configure Start.
type Options struct {
	// StateDir holds the control plane's state and the node's pods; both
	// start afresh every time. Its volumes directory holds the persistent
	// volumes' filesystems (VolumeDir, and its files beside it), which stay:
	// a later run has no PV for them.
	StateDir string
	// CRDDirs are installed before Start returns.
	CRDDirs []string
	// KubeconfigPath is where the admin kubeconfig goes; default
	// <StateDir>/kubeconfig.
	KubeconfigPath string
	// NodeName defaults to DefaultNodeName.
	NodeName string
	// RayVenvDir is the Ray virtualenv of the pinned release, which Ray
	// images of that release (and latest, nightly) run, and RedisServer
	// the redis-server that Redis images map to.
	RayVenvDir, RedisServer string
	// RayInstaller is hack/ray-venv.sh, which the node runs to install
	// the release another Ray image tag names, as its image pull. Empty:
	// every Ray image runs RayVenvDir.
	RayInstaller string
	// Capacity overrides the node's capacity, and CapacityNote says why
	// (node.Settings; default node.ChooseCapacity's).
	Capacity     corev1.ResourceList
	CapacityNote string
	// AllowHostPrivileges and SharedHostDirs are the node's host-access
	// policy (node.Config): by default it refuses pods that need root on
	// the host and every hostPath volume.
	AllowHostPrivileges bool
	SharedHostDirs      []string
	// CertManager runs cert-manager's controller (local/internal/certmanager)
	// and installs its CRDs.
	CertManager bool
	// SyncFrequency is the node's volume resync period (node.Config);
	// zero means the kubelet's default, 1 min.
	SyncFrequency time.Duration
	// Limits bound every pod of the node (node.Settings.Limits); zero
	// fields take their defaults.
	Limits podworker.Limits
	// Kueue runs Kueue's controller manager (local/internal/kueue) and
	// installs its CRDs and webhook configurations.
	Kueue bool
	// Gateway runs Traefik (local/internal/traefik), a Gateway API
	// implementation listening on the node's address, and installs the
	// Gateway API CRDs and its GatewayClass.
	Gateway bool
	// Registry, when valid, is the loopback address where the cluster
	// serves an image registry that the host and the node reach (not the
	// pods): images pushed there run on the node (DefaultRegistry for
	// `make run`).
	Registry netip.AddrPort
	// AuditLogPath, when set, makes the API server write an audit log
	// there (controlplane.Options.AuditLogPath): who made each request.
	AuditLogPath string
	// Log receives the output of the control-plane components and the node
	// process (nil: only their log files in StateDir); Logger
	// what this process does (the pod network, the NetworkPolicy enforcer).
	Log    io.Writer
	Logger logr.Logger
}

// Cluster is a running local cluster.
type Cluster struct {
	// ControlPlane is the API server and its companions.
	ControlPlane *controlplane.ControlPlane
	// Network is the pods' bridge, its address (the node's) and prefix.
	Network *sandbox.Network
	// NetworkPolicies enforces the NetworkPolicies on the node's pods.
	NetworkPolicies *netpolicy.Enforcer
	// NodeName is the Node's name.
	NodeName string

	registry *imageRegistry // nil without Options.Registry
	lock     *hostlock.Lock
	stateDir string
	log      io.Writer
	logger   logr.Logger
	nodeConf nodeProcessConfig
	nodeMu   sync.Mutex
	node     *nodeProcess // nil while no node process runs
	// nodeStarted is set once a node process was started: from then on
	// the node's state directory may hold sandboxes.
	nodeStarted bool
	nodeDied    chan error
}

// RESTConfig reaches the API server as a cluster admin.
func (c *Cluster) RESTConfig() *rest.Config { return c.ControlPlane.RESTConfig }

// KubeconfigPath is the admin kubeconfig file.
func (c *Cluster) KubeconfigPath() string { return c.ControlPlane.KubeconfigPath }

// Start brings the cluster up in order: the sandbox host (bridge, pod
// network), the control plane on it, then the node; it returns once the
// node is Ready. On error, what was started is stopped again.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	c := &Cluster{NodeName: opts.NodeName, stateDir: opts.StateDir, log: opts.Log, logger: opts.Logger, nodeDied: make(chan error, 1)}
	if err := c.start(ctx, &opts); err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
		defer cancel()
		return nil, errors.Join(err, c.Stop(stopCtx))
	}
	return c, nil
}

// withCertManager adds cert-manager's controller to addons and its CRD
// files to crds.
func withCertManager(addons []controlplane.Addon, crds []string) ([]controlplane.Addon, []string, error) {
	bin, err := certmanager.Binary()
	if err != nil {
		return nil, nil, err
	}
	files, err := certmanager.CRDFiles()
	if err != nil {
		return nil, nil, err
	}
	return append(addons, &certmanager.CertManager{Binary: bin}), append(slices.Clone(crds), files...), nil
}

// withKueue adds Kueue's manager, last: its webhook configurations take
// effect once it serves them.
func withKueue(addons []controlplane.Addon) ([]controlplane.Addon, error) {
	k, err := kueue.New()
	if err != nil {
		return nil, err
	}
	return append(addons, k), nil
}

// stopTimeout bounds the clean-up after a failed start.
const stopTimeout = time.Minute

func (o *Options) complete() error {
	if o.StateDir == "" {
		return errors.New("cluster.Options.StateDir is required")
	}
	if o.RayVenvDir == "" {
		return errors.New("cluster.Options.RayVenvDir is required: Ray images run from it")
	}
	if o.NodeName == "" {
		o.NodeName = DefaultNodeName
	}
	if o.KubeconfigPath == "" {
		o.KubeconfigPath = filepath.Join(o.StateDir, "kubeconfig")
	}
	return nil
}

func (c *Cluster) start(ctx context.Context, opts *Options) error {
	// The bridge, kube-proxy's nftables table and port 53 on the node
	// address are the machine's: one local cluster at a time.
	lock, err := hostlock.Acquire(ctx, hostlock.DefaultPath, func() {
		opts.Logger.Info("Waiting for another local cluster on this machine to stop", "lock", hostlock.DefaultPath)
	})
	if err != nil {
		return err
	}
	c.lock = lock
	if opts.Registry.IsValid() {
		if c.registry, err = startRegistry(opts.Registry, filepath.Join(opts.StateDir, "registry")); err != nil {
			return err
		}
	}
	hostConf := sandbox.HostConfig{StateDir: hostStateDir(opts.StateDir), Log: opts.Logger.WithName("network")}
	network, err := sandbox.NewNetwork(hostConf)
	if err != nil {
		return fmt.Errorf("preparing the pod network: %w", err)
	}
	c.Network = network
	addons, err := netaddons.New()
	if err != nil {
		return err
	}
	metricsServer, err := metricsserver.Binary()
	if err != nil {
		return err
	}
	addons = append(addons, &metricsserver.MetricsServer{Binary: metricsServer})
	crds := opts.CRDDirs
	if opts.CertManager {
		if addons, crds, err = withCertManager(addons, crds); err != nil {
			return err
		}
	}
	if opts.Gateway {
		t, err := traefik.New()
		if err != nil {
			return err
		}
		addons = append(addons, t)
	}
	if opts.Kueue {
		if addons, err = withKueue(addons); err != nil {
			return err
		}
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		StateDir:       opts.StateDir,
		CRDDirs:        crds,
		KubeconfigPath: opts.KubeconfigPath,
		AuditLogPath:   opts.AuditLogPath,
		Log:            opts.Log,
		Network: &controlplane.NodeNetwork{
			NodeIP: network.Gateway(), PodCIDR: network.PodCIDR(), NodeName: opts.NodeName, Addons: addons,
		},
		NodeMonitorGracePeriod: node.NodeMonitorGracePeriod,
	})
	if err != nil {
		return err
	}
	c.ControlPlane = cp
	// Before the node: no pod runs without its policies.
	c.NetworkPolicies, err = netpolicy.Start(ctx, netpolicy.Config{
		RESTConfig: cp.RESTConfig, NodeName: opts.NodeName, Bridge: network.Bridge(), PodCIDR: network.PodCIDR(),
		Log: opts.Logger.WithName("netpolicy"),
	})
	if err != nil {
		return fmt.Errorf("starting the network policy enforcer: %w", err)
	}
	port, err := controlplane.FreePorts(1)
	if err != nil {
		return err
	}
	c.nodeConf = nodeProcessConfig{
		Settings: node.Settings{
			NodeName:            opts.NodeName,
			ClusterDNS:          []string{netaddons.ClusterDNSAddr.String()},
			KubernetesService:   cp.KubernetesService,
			ListenAddress:       netip.AddrPortFrom(network.Gateway(), uint16(port[0])), //nolint:gosec // a port number
			ClientCA:            cp.KubeletClientCA,
			Capacity:            opts.Capacity,
			CapacityNote:        opts.CapacityNote,
			AllowHostPrivileges: opts.AllowHostPrivileges,
			SharedHostDirs:      opts.SharedHostDirs,
			VolumeDir:           VolumeDir(opts.StateDir),
			SeccompDir:          SeccompDir(opts.StateDir),
			SyncFrequency:       opts.SyncFrequency,
			Limits:              opts.Limits,
		},
		Kubeconfig: opts.KubeconfigPath, QPS: cp.RESTConfig.QPS, Burst: cp.RESTConfig.Burst,
		HostStateDir: hostConf.StateDir,
		RayVenvDir:   opts.RayVenvDir,
		RedisServer:  opts.RedisServer,
		RayInstaller: opts.RayInstaller,
	}
	if err := c.startNode(ctx, false); err != nil {
		return fmt.Errorf("starting the local node: %w", err)
	}
	return nil
}

// NodeHostNames are the machine-wide names of what the node of a cluster
// with state directory stateDir makes (see sandbox.HostNames).
func NodeHostNames(stateDir string) (sandbox.HostNames, error) {
	return sandbox.NamesOf(sandbox.HostConfig{StateDir: hostStateDir(stateDir)})
}

// hostStateDir is where the node keeps its pods' sandboxes.
func hostStateDir(stateDir string) string { return filepath.Join(stateDir, "node") }

// ImageStoreDir is the node's image store of the local cluster whose state
// is in stateDir: it outlives the node process, and `ray-local load
// image-archive` loads into it.
func ImageStoreDir(stateDir string) string { return nodeImageStoreDir(hostStateDir(stateDir)) }

func nodeImageStoreDir(hostStateDir string) string { return filepath.Join(hostStateDir, "images") }

// startNode starts the node process, adopting what an earlier one left
// if adopt, and returns once its Node is Ready.
func (c *Cluster) startNode(ctx context.Context, adopt bool) error {
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	if c.node != nil {
		return errors.New("the node process runs")
	}
	conf := c.nodeConf
	conf.Adopt = adopt
	c.nodeStarted = true
	p, err := startNodeProcess(ctx, c.stateDir, conf, c.log)
	if err != nil {
		return err
	}
	c.node = p
	go c.watchNode(p)
	return nil
}

// watchNode reports a node process that exits on its own on NodeDied.
func (c *Cluster) watchNode(p *nodeProcess) {
	err, ok := <-p.died()
	if !ok {
		return
	}
	c.logger.Error(err, "The node process exited on its own: its pods run on with no node agent")
	select {
	case c.nodeDied <- err:
	default:
	}
}

// NodeDied receives the exit of a node process that ended on its own (a
// crash), not by KillNode or Stop.
func (c *Cluster) NodeDied() <-chan error { return c.nodeDied }

// KillNode kills the node process with SIGKILL, as a kubelet dies: the
// pods' containers run on, the Node's heartbeats stop (the control plane
// marks it once its grace period passes) and logs, exec and port-forward
// fail until StartNode.
func (c *Cluster) KillNode() error {
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	if c.node == nil {
		return errors.New("no node process runs")
	}
	err := c.node.kill()
	c.node = nil
	return err
}

// StartNode starts the node process again after KillNode: it adopts the
// running pods' sandboxes and containers (same container IDs, restart
// counts from the pods' statuses), destroys those of pods the API no longer
// binds to the node, and acts on what changed meanwhile. It returns once
// the Node is Ready.
func (c *Cluster) StartNode(ctx context.Context) error { return c.startNode(ctx, true) }

// RestartNode kills the node process and starts it again under its running
// pods (KillNode, then StartNode).
func (c *Cluster) RestartNode(ctx context.Context) error {
	if err := c.KillNode(); err != nil {
		return err
	}
	return c.StartNode(ctx)
}

// NodeInventory lists what the node's pods hold on the machine (see
// sandbox.Inventory).
func (c *Cluster) NodeInventory() (sandbox.Inventory, error) {
	return sandbox.ReadInventory(sandbox.HostConfig{StateDir: hostStateDir(c.stateDir)})
}

// Stop stops the pods (as their deletion would), the node, the control
// plane and the pod network, and reports what failed. It is safe to call
// on a partly started cluster.
func (c *Cluster) Stop(ctx context.Context) error {
	errs := []error{c.stopNode(ctx)}
	if errs[0] == nil {
		// The pods are gone: their volumes' filesystems and loop devices go
		// too (see localpv.DetachAll).
		errs = append(errs, localpv.DetachAll(VolumeDir(c.stateDir)))
	}
	if c.NetworkPolicies != nil {
		errs = append(errs, c.NetworkPolicies.Stop())
	}
	if c.ControlPlane != nil {
		errs = append(errs, c.ControlPlane.Stop())
	}
	if c.Network != nil {
		errs = append(errs, c.Network.Close())
	}
	if c.registry != nil {
		errs = append(errs, c.registry.close(ctx))
	}
	errs = append(errs, c.lock.Release())
	return errors.Join(errs...)
}

// stopNode stops the node process, which stops its pods. When it was
// killed, died, or fails to stop cleanly, what it left (containers,
// sandboxes) is swept here instead, so that a stopped cluster leaves
// nothing running.
func (c *Cluster) stopNode(ctx context.Context) error {
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	if !c.nodeStarted {
		return nil
	}
	var err error
	if c.node != nil {
		err = c.node.stop(ctx)
		c.node = nil
		if err == nil {
			return nil
		}
	}
	host, sweepErr := sandbox.NewHost(ctx, sandbox.HostConfig{StateDir: c.nodeConf.HostStateDir, ExternalNetwork: true, Log: c.logger.WithName("sweep")})
	if sweepErr == nil {
		sweepErr = host.Close(ctx)
	}
	return errors.Join(err, sweepErr)
}

// NodePID is the node process's pid, 0 while none runs.
func (c *Cluster) NodePID() int {
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	if c.node == nil {
		return 0
	}
	return c.node.pid
}
