// Package controlplane runs a real local Kubernetes control plane from the
// binaries hack/k8s-binaries.sh builds: etcd, kube-apiserver,
// kube-scheduler and kube-controller-manager, plus kwok to simulate nodes, so
// that pods are scheduled and go Running and Ready, owners garbage-collect
// their dependents and batch Jobs get pods, all without a container runtime.
// It serves Kubernetes' workload-aware scheduling API (scheduling.k8s.io/
// v1alpha2) with gang scheduling, for the operator's KubernetesWAS gate
// (workloads.go).
//
// With a NodeNetwork it also serves pods on a bridge of this host, and starts
// the network's Addons (the local module's kube-proxy and CoreDNS); the
// operator module's tests and benchmarks use it without, so that this
// module needs none of what the add-ons need.
//
// Every component runs in its own process group and gets SIGKILL if this
// process dies, so nothing outlives it; Stop, or canceling the context given
// to Start, ends them all.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ray-operator/ray-operator/internal/syncwriter"
)

// Options configure Start. Only StateDir is required.
type Options struct {
	// StateDir holds etcd's data, credentials, kubeconfigs and one log file
	// per component (<component>.log). Start makes it its owner's only
	// (0700) and wipes <StateDir>/etcd: every start is a fresh cluster.
	StateDir string
	// BinDir holds etcd, kube-apiserver, kube-scheduler and
	// kube-controller-manager; default BinDir().
	BinDir string
	// KwokBinary is the kwok executable; default KwokBinary(). Used only when
	// Nodes > 0.
	KwokBinary string
	// KwokStagesDir holds the kwok Stage manifests (*.yaml); default
	// $RAY_OPERATOR_KWOK_STAGES, else node/fast, node/heartbeat and pod/fast
	// from kwok's module.
	KwokStagesDir string
	// Nodes is the number of simulated nodes. With none, kwok does not run
	// and pods stay Pending.
	Nodes int
	// KwokPodCIDR, when set (e.g. "10.128.0.0/12"), gives simulated node i
	// the i-th /KwokNodePodCIDRBits subnet of it as spec.podCIDR, from which
	// kwok hands out its pods' IPs: every pod gets an address of its own.
	// Without it kwok gives every pod one from a single /24, which more
	// than 254 pods share.
	KwokPodCIDR string
	// KwokPodParallelism, when positive, is how many Pods kwok plays a stage
	// for at once (its podPlayStageParallelism; kwok's own default is 4).
	// Each play waits for its status patch, so kwok makes at most this many
	// Pods Ready per API server round trip.
	KwokPodParallelism int
	// CRDDirs are directories of CRD manifests to install; Start returns once
	// they are established.
	CRDDirs []string
	// KubeconfigPath is where the admin kubeconfig is written, readable by
	// its owner only (0600); default <StateDir>/kubeconfig.
	KubeconfigPath string
	// Log receives every component's output, each line prefixed with the
	// component's name. Nil discards it (the log files remain).
	Log io.Writer
	// StartTimeout bounds Start; default 2 minutes.
	StartTimeout time.Duration
	// AuditLogPath, when set, makes kube-apiserver write an audit log there
	// (auditlog.Policy: every request at the Metadata level, JSON lines).
	AuditLogPath string
	// ComponentQPS, when positive, is the client QPS of kube-scheduler and
	// kube-controller-manager (burst twice that) instead of their defaults
	// (50 and 20), so that neither is the bottleneck of a benchmark.
	ComponentQPS int
	// Network, when set, serves pods on a bridge of this host: kube-apiserver
	// on the bridge address instead of 127.0.0.1, and the network's addons
	// (see NodeNetwork). Nil runs none of it and keeps the API server on
	// 127.0.0.1.
	Network *NodeNetwork
	// NodeMonitorGracePeriod, when positive, is kube-controller-manager's
	// --node-monitor-grace-period (its default is 50 s): how long a Node's
	// Lease may go unrenewed before the Node is marked Unknown and its pods
	// Ready=False. Its nodes must renew their Leases several times within it.
	NodeMonitorGracePeriod time.Duration
	// Addons run on a control plane without a Network (with one, list them
	// in Network.Addons): prepared and started as the network's are, once
	// the API server answers, with a Host whose Network is nil.
	Addons []Addon
}

// ControlPlane is a running local control plane.
type ControlPlane struct {
	// RESTConfig reaches the API server as a cluster admin (system:masters).
	RESTConfig *rest.Config
	// KubeconfigPath is the admin kubeconfig file for RESTConfig.
	KubeconfigPath string
	// APIServerURL is the https address of kube-apiserver.
	APIServerURL string
	// KubernetesService is the address of the kubernetes Service, where pods
	// reach the API server (KubernetesServiceAddr).
	KubernetesService netip.AddrPort
	// EtcdURL is etcd's client URL (https on 127.0.0.1); etcd takes only
	// clients with a certificate of its own CA, which kube-apiserver alone
	// holds (in the state directory, readable by its owner only).
	EtcdURL string
	// KubeletClientCA is the PEM of the CA that signed the client certificate
	// kube-apiserver presents to kubelets. Nil without a NodeNetwork.
	KubeletClientCA []byte

	mu        sync.Mutex
	processes []*process     // in start order
	atStops   []func() error // run by Stop after the processes ended, newest first
	stopped   chan struct{}
	stopErr   error
}

// Start starts etcd and kube-apiserver, installs the CRDs, starts
// kube-scheduler, kube-controller-manager and kwok with opts.Nodes simulated
// nodes, and returns when all of them are ready. Canceling ctx stops
// everything, as Stop does.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	cp := &ControlPlane{KubeconfigPath: opts.KubeconfigPath, KubernetesService: KubernetesServiceAddr, stopped: make(chan struct{})}
	startCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := cp.start(startCtx, &opts); err != nil {
		return nil, errors.Join(fmt.Errorf("starting the local control plane (logs in %s): %w", opts.StateDir, err), cp.Stop())
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = cp.Stop()
		case <-cp.stopped:
		}
	}()
	return cp, nil
}

// complete checks opts and fills in defaults.
func (o *Options) complete() error {
	if o.StateDir == "" {
		return errors.New("controlplane.Options.StateDir is required")
	}
	var err error
	if o.StateDir, err = filepath.Abs(o.StateDir); err != nil {
		return fmt.Errorf("resolving the state directory: %w", err)
	}
	if o.BinDir == "" {
		if o.BinDir, err = BinDir(); err != nil {
			return err
		}
	}
	if o.Network != nil {
		if len(o.Addons) > 0 {
			return errors.New("controlplane.Options.Addons is for a control plane without a Network; list them in Network.Addons")
		}
		if err := o.Network.complete(); err != nil {
			return err
		}
	}
	if o.Nodes > 0 && o.KwokBinary == "" {
		if o.KwokBinary, err = KwokBinary(); err != nil {
			return err
		}
	}
	if o.KwokPodCIDR != "" {
		if _, err := NodePodCIDR(o.KwokPodCIDR, o.Nodes-1); err != nil {
			return err
		}
	}
	if o.KwokPodParallelism < 0 {
		return fmt.Errorf("kwok pod parallelism %d: want 0 (kwok's default) or more", o.KwokPodParallelism)
	}
	if o.KubeconfigPath == "" {
		o.KubeconfigPath = filepath.Join(o.StateDir, "kubeconfig")
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.Log != nil {
		o.Log = syncwriter.New(o.Log)
	}
	return nil
}

// start runs the start-up steps in order.
func (cp *ControlPlane) start(ctx context.Context, opts *Options) error {
	if err := prepareStateDir(opts.StateDir); err != nil {
		return err
	}
	creds, err := cp.writeCredentials(filepath.Join(opts.StateDir, "pki"), opts.Network)
	if err != nil {
		return err
	}
	ports, err := FreePorts(5)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort, schedulerPort, kcmPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	if err := cp.startAPIServer(ctx, opts, creds, etcdClient, etcdPeer, apiPort); err != nil {
		return err
	}
	if err := cp.startControllers(opts, creds, schedulerPort, kcmPort); err != nil {
		return err
	}
	// Installing large CRDs takes the API server seconds; nodes and
	// controllers come up meanwhile.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return cp.installCRDs(gctx, opts.CRDDirs) })
	g.Go(func() error { return cp.startKwok(gctx, opts) })
	g.Go(func() error { return cp.waitControllersHealthy(gctx, schedulerPort, kcmPort) })
	g.Go(func() error { return cp.startNodeNetwork(gctx, opts, creds) })
	g.Go(func() error { return runAddons(gctx, &Host{cp: cp, opts: opts, creds: creds}, opts.Addons) })
	return g.Wait()
}

// prepareStateDir creates the state directory, which holds the admin
// kubeconfig, for its owner only, and removes old etcd data.
func prepareStateDir(dir string) error {
	if err := privateDir(dir); err != nil {
		return fmt.Errorf("preparing the state directory: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "etcd")); err != nil {
		return fmt.Errorf("removing old etcd data: %w", err)
	}
	return nil
}

// run starts one component and records it for Stop.
func (cp *ControlPlane) run(opts *Options, name, binary string, args []string) error {
	return cp.runEnv(opts, name, binary, args, nil)
}

// runEnv is run with env added to the process's environment.
func (cp *ControlPlane) runEnv(opts *Options, name, binary string, args, env []string) error {
	p, err := startProcess(name, binary, args, env, opts.StateDir, opts.Log)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.processes = append(cp.processes, p)
	return nil
}

// PIDs returns the process id of each component still running, by name:
// etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok and
// any addon. Benchmarks read their CPU time and memory from /proc.
func (cp *ControlPlane) PIDs() map[string]int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	pids := make(map[string]int, len(cp.processes))
	for _, p := range cp.processes {
		if !p.exited() {
			pids[p.name] = p.cmd.Process.Pid
		}
	}
	return pids
}

// atStop has Stop call f once every process has ended.
func (cp *ControlPlane) atStop(f func() error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.atStops = append(cp.atStops, f)
}

// checkRunning returns the exit error of the first component that exited.
func (cp *ControlPlane) checkRunning() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, p := range cp.processes {
		if p.exited() {
			return p.exitError()
		}
	}
	return nil
}

// Stop stops every component, newest first, and waits for them to exit. It
// is safe to call more than once and concurrently.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	select {
	case <-cp.stopped:
		return cp.stopErr
	default:
	}
	var errs []error
	for i := len(cp.processes) - 1; i >= 0; i-- {
		errs = append(errs, cp.processes[i].stop())
	}
	for i := len(cp.atStops) - 1; i >= 0; i-- {
		errs = append(errs, cp.atStops[i]())
	}
	cp.stopErr = errors.Join(errs...)
	close(cp.stopped)
	return cp.stopErr
}

// Done is closed once the control plane has been stopped.
func (cp *ControlPlane) Done() <-chan struct{} { return cp.stopped }

// Err returns the error of a component that exited on its own, or nil while
// all of them run.
func (cp *ControlPlane) Err() error { return cp.checkRunning() }

// writeKubeconfig writes an admin kubeconfig for the API server at url,
// readable by its owner only; a directory it creates for it is its
// owner's only too.
func writeKubeconfig(path, url string, creds *credentials) error {
	cfg := clientcmdapi.NewConfig()
	const name = "ray-operator-local"
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: creds.servingCAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: creds.adminToken}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encoding the kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating kubeconfig directory: %w", err)
	}
	return writeFiles(map[string][]byte{path: data})
}
