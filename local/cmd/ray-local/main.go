// Command ray-local is the README's first command (make run). Without a
// kubeconfig it starts a local cluster, installs the CRDs, writes a
// kubeconfig to <repo>/.cache/local/kubeconfig, prints the export KUBECONFIG
// line and runs the operator in-process against it. The local cluster's
// node runs pods as real processes (Ray images run the cached Ray
// virtualenv; local/internal/cluster), with cluster DNS and ClusterIP
// Services; the operator reaches Ray dashboards through the API server's
// proxy (--use-kubernetes-proxy), as it runs outside the pod network. With
// --simulated, or where the machine cannot host real pods (it says why),
// kwok simulates --nodes nodes instead. Given a kubeconfig, it installs the
// CRDs in that cluster and runs the operator there. Ctrl-C stops
// everything.
//
// `ray-local load image-archive FILE [--name REF]` loads an image archive
// into the local node's image store (as `kind load image-archive`), for
// images no registry here serves.
//
// It takes every ray-operator flag as well as its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ray-operator/ray-operator/internal/buildinfo"
	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/operator"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/containerlog"
	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
	"github.com/ray-operator/ray-operator/local/internal/node"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
)

// localFlags are ray-local's own flags.
type localFlags struct {
	stateDir   string
	crdDir     string
	nodes      int
	forceLocal bool
	webhooks   bool
	simulated  bool
	root       string
	// certManager runs cert-manager's controller on the local cluster.
	certManager bool
	// kueue runs Kueue's controller manager on the local cluster.
	kueue bool
	// gateway runs Traefik, a Gateway API implementation, on the local
	// cluster.
	gateway bool
	// rayVenv and redisServer are what Ray and Redis images run
	// ($RAY_OPERATOR_RAY_VENV, $RAY_OPERATOR_REDIS_SERVER; `make run` sets
	// both); rayInstaller installs the Ray release another image tag names
	// ($RAY_OPERATOR_RAY_INSTALLER, hack/ray-venv.sh; `make run` sets it).
	rayVenv, redisServer, rayInstaller string
	// allowHostPrivileges and sharedHostDirs are the local node's
	// host-access policy; sharedHostDirsList is the flag as given.
	allowHostPrivileges bool
	sharedHostDirsList  string
	sharedHostDirs      []string
	// syncFrequency is the local node's volume resync period.
	syncFrequency time.Duration
	// podMaxPids, containerLogMaxSize and containerLogMaxFiles bound every
	// pod of the local node (podworker.Limits).
	podMaxPids           int64
	containerLogMaxSize  string
	containerLogMaxFiles int
	limits               podworker.Limits
	// nodeCPU and nodeMemory are the local node's capacity as given (empty:
	// node.ChooseCapacity's defaults); machine is what the machine has and
	// capacity what the node advertises.
	nodeCPU, nodeMemory string
	machine             node.Machine
	capacity            node.Capacity
	// registryAddr is where the local cluster serves its image registry
	// as given (empty: none), registry as parsed.
	registryAddr string
	registry     netip.AddrPort
}

// Flags of the local node's capacity.
const (
	flagNodeCPU    = "node-cpu"
	flagNodeMemory = "node-memory"
)

func main() {
	// The local cluster's node runs as a process of this executable.
	localcluster.RunNodeIfChild()
	if len(os.Args) > 1 && os.Args[1] == loadCommand {
		if err := runLoad(os.Args[2:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "ray-local load:", err)
			os.Exit(1)
		}
		return
	}
	opFlags := operator.BindFlags(flag.CommandLine)
	local := bindLocalFlags(flag.CommandLine)
	localDefaults(flag.CommandLine)
	flag.Parse()
	if opFlags.VersionRequested() {
		fmt.Println(buildinfo.Get())
		return
	}
	if err := run(opFlags, local); err != nil {
		fmt.Fprintln(os.Stderr, "ray-local:", err)
		os.Exit(1)
	}
}

func bindLocalFlags(fs *flag.FlagSet) *localFlags {
	l := &localFlags{}
	fs.StringVar(&l.stateDir, "state-dir", "", "Directory of the local control plane's data, logs and kubeconfig (default <repo>/.cache/local).")
	fs.StringVar(&l.crdDir, "crd-dir", "", "Directory of the CRDs to install (default <repo>/config/crd/bases).")
	fs.BoolVar(&l.simulated, "simulated", false, "Run pods on simulated kwok nodes (--nodes of them): they turn Running and Ready but run nothing, which suits thousands of pods. Default: one local node that runs pods as real processes.")
	fs.IntVar(&l.nodes, "nodes", 3, "Number of simulated (kwok) nodes, with --simulated.")
	fs.BoolVar(&l.certManager, "cert-manager", false, "Local node: run cert-manager's certificate and issuer controllers (SelfSigned and CA issuers; no webhook) and install its CRDs, for RayClusters with tlsOptions (gate RayClusterMTLS). Needs $RAY_OPERATOR_CERT_MANAGER or `make tools`.")
	fs.DurationVar(&l.syncFrequency, "sync-frequency", podworker.DefaultSyncFrequency, "Local node: how often pods' configMap, secret, downwardAPI and projected volumes are rewritten from the API (the kubelet's --sync-frequency). A shorter period shows changed Secrets, such as renewed mTLS certificates, sooner.")
	fs.Int64Var(&l.podMaxPids, "pod-max-pids", podworker.DefaultPodPidsLimit, "Local node: the most processes and threads one pod may run together, pids.max of its cgroup (the kubelet's --pod-max-pids); -1 for no limit.")
	fs.StringVar(&l.containerLogMaxSize, "container-log-max-size", "10Mi", "Local node: the size at which a container's log is rotated (the kubelet's --container-log-max-size).")
	fs.IntVar(&l.containerLogMaxFiles, "container-log-max-files", containerlog.DefaultMaxFiles, "Local node: how many log files a container keeps, the current one included (the kubelet's --container-log-max-files); at least 2.")
	fs.BoolVar(&l.kueue, "kueue", false, "Local node: run Kueue's controller manager (built from the sigs.k8s.io/kueue module the Makefile pins) with its CRDs and webhooks, managing RayJobs, RayClusters and RayServices labeled kueue.x-k8s.io/queue-name (docs/kueue.md). Needs $RAY_OPERATOR_KUEUE or `make tools`.")
	fs.BoolVar(&l.gateway, "gateway", false, "Local node: run Traefik (built from the github.com/traefik/traefik/v3 module the Makefile pins) as a Gateway API implementation with the Gateway API CRDs and GatewayClass \"traefik\": Gateways of that class listen on port 80 of the node's address and split requests by HTTPRoute weights, as RayService incremental upgrades need (docs/local.md). Needs $RAY_OPERATOR_TRAEFIK or `make tools`.")
	fs.StringVar(&l.nodeCPU, flagNodeCPU, "", fmt.Sprintf("Local node: the CPUs it advertises, a Kubernetes quantity (\"8\", \"2500m\"), at least 1. The scheduler places pods by their requests; containers share the machine's CPUs in proportion to their requests and stay within their limits. Default: %d times the machine's CPUs, at least %d, so that KubeRay's samples fit (docs/local.md).", node.CPUPerMachineCPU, node.MinDefaultCPU))
	fs.StringVar(&l.nodeMemory, flagNodeMemory, "", "Local node: the memory it advertises, a Kubernetes quantity (\"16Gi\"), at least 1Gi; more than the machine's overcommits it (said at start and on the Node). Default: the machine's memory.")
	fs.StringVar(&l.registryAddr, "registry", localcluster.DefaultRegistry.String(), "Local node: the loopback address and port where the local cluster serves an image registry that the host and the node reach, not the pods (as `kind load` for kind): `make push IMAGE=<address>/name:tag` pushes there, and pods run images by that reference (docs/local.md). Empty: none.")
	fs.BoolVar(&l.forceLocal, "local", false, "Start a local control plane even when a kubeconfig is found.")
	fs.BoolVar(&l.webhooks, "webhooks", false, "Serve the validating webhooks too (local control plane only): installs a ValidatingWebhookConfiguration that calls https://localhost:<--webhook-port>, with a certificate the operator makes itself.")
	fs.BoolVar(&l.allowHostPrivileges, hostaccess.FlagAllowHostPrivileges, false, "Local node: admit pods that need root on the host (privileged containers, hostNetwork, hostPID, hostIPC, hostUsers: true) and run them without a user namespace. Default: such pods fail with reason HostPrivilegesForbidden.")
	fs.StringVar(&l.sharedHostDirsList, hostaccess.FlagSharedHostDirs, "", "Local node: comma-separated absolute paths of existing host directories under which hostPath volumes are admitted. Default none: pods with a hostPath volume fail with reason HostPathForbidden.")
	return l
}

// localDefaults changes operator flag defaults that suit a cluster but not
// a developer's terminal: one process needs no leader election, people read
// the logs, and the metrics, health and webhook endpoints are for this
// machine only (in a Pod they must answer on the Pod's address).
func localDefaults(fs *flag.FlagSet) {
	defaults := map[string]string{
		"enable-leader-election":    "false",
		"log-stdout-encoder":        "console",
		"metrics-addr":              "127.0.0.1:8080",
		"health-probe-bind-address": "127.0.0.1:8082",
		"webhook-host":              "127.0.0.1",
	}
	for name, value := range defaults {
		f := fs.Lookup(name)
		f.DefValue = value
		_ = f.Value.Set(value)
	}
}

func run(opFlags *operator.Flags, local *localFlags) error {
	settings, err := opFlags.Resolve(os.LookupEnv)
	if err != nil {
		return err
	}
	if err := local.complete(); err != nil {
		return err
	}
	tgt := chooseTarget(gatherEnvironment(local))
	fmt.Fprintln(os.Stderr, "ray-local:", tgt.reason)

	ctx, cancel := context.WithCancel(ctrl.SetupSignalHandler())
	defer cancel()
	if local.webhooks && !tgt.local {
		return errors.New("--webhooks needs the local control plane: a remote API server cannot call https://localhost (use config/default-with-webhooks there)")
	}
	if tgt.local && !local.simulated {
		if err := localcluster.CanHostPods(); err != nil {
			fmt.Fprintf(os.Stderr, "ray-local: cannot run real pods here: %v; using simulated nodes instead\n", err)
			local.simulated = true
		}
	}
	if err := local.checkAddons(tgt); err != nil {
		return err
	}
	if tgt.local && !local.simulated {
		// The operator runs on the host, outside the pod network and its
		// DNS: it reaches dashboards through the API server.
		settings.Config.UseKubernetesProxy = true
		local.reportCapacity()
	} else if local.allowHostPrivileges || len(local.sharedHostDirs) > 0 {
		fmt.Fprintf(os.Stderr, "ray-local: --%s and --%s apply to the local node only: ignored\n", hostaccess.FlagAllowHostPrivileges, hostaccess.FlagSharedHostDirs)
	}
	if (!tgt.local || local.simulated) && (local.nodeCPU != "" || local.nodeMemory != "") {
		fmt.Fprintf(os.Stderr, "ray-local: --%s and --%s apply to the local node only: ignored\n", flagNodeCPU, flagNodeMemory)
	}
	restConfig, stop, err := connect(ctx, cancel, tgt, local)
	if err != nil {
		return err
	}
	defer stop()
	if local.webhooks {
		if settings.Webhooks, err = installLocalWebhooks(ctx, restConfig, settings.Webhooks, local); err != nil {
			return err
		}
		settings.Knobs.Webhooks = true // as if ENABLE_WEBHOOKS=true, for the logged settings
	}
	return operator.Run(ctx, settings, opFlags, restConfig)
}

// checkAddons refuses the addons of the local node (--cert-manager,
// --kueue, --gateway) when pods do not run on it.
func (l *localFlags) checkAddons(tgt target) error {
	onNode := tgt.local && !l.simulated
	if l.certManager && !onNode {
		return errors.New("--cert-manager needs the local node that runs real pods: not with --simulated, a remote cluster or a machine that cannot host pods (install cert-manager there)")
	}
	if l.kueue && !onNode {
		return errors.New("--kueue needs the local node that runs real pods: not with --simulated, a remote cluster or a machine that cannot host pods (install Kueue there)")
	}
	if l.gateway && !onNode {
		return errors.New("--gateway needs the local node that runs real pods: not with --simulated, a remote cluster or a machine that cannot host pods (install a Gateway API implementation there)")
	}
	return nil
}

// complete checks the node's host-access flags and fills the
// repository-relative defaults.
func (l *localFlags) complete() error {
	if err := l.parseNodeFlags(); err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("getting the working directory: %w", err)
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		if l.stateDir != "" && l.crdDir != "" && !l.webhooks {
			return nil
		}
		return fmt.Errorf("%w (run ray-local from the repository, or set --state-dir and --crd-dir)", err)
	}
	l.root = root
	if l.stateDir == "" {
		l.stateDir = filepath.Join(root, ".cache", "local")
	}
	if l.crdDir == "" {
		l.crdDir = filepath.Join(root, "config", "crd", "bases")
	}
	return nil
}

// parseNodeFlags splits --shared-host-dirs and checks it and
// --sync-frequency as the node will, before anything starts.
func (l *localFlags) parseNodeFlags() error {
	for _, d := range strings.Split(l.sharedHostDirsList, ",") {
		if d = strings.TrimSpace(d); d != "" {
			l.sharedHostDirs = append(l.sharedHostDirs, d)
		}
	}
	if _, err := hostaccess.NewPolicy(l.allowHostPrivileges, l.sharedHostDirs); err != nil {
		return fmt.Errorf("--%s: %w", hostaccess.FlagSharedHostDirs, err)
	}
	if l.syncFrequency <= 0 {
		return fmt.Errorf("--sync-frequency must be positive, got %v", l.syncFrequency)
	}
	if err := l.chooseCapacity(); err != nil {
		return err
	}
	if l.registryAddr != "" {
		addr, err := netip.ParseAddrPort(l.registryAddr)
		if err != nil || !addr.Addr().IsLoopback() {
			return fmt.Errorf("--registry %q: want a loopback address and port (127.0.0.1:5001)", l.registryAddr)
		}
		l.registry = addr
	}
	return l.parseLimits()
}

// parseLimits reads the local node's pod limits from their flags.
func (l *localFlags) parseLimits() error {
	size, err := resource.ParseQuantity(l.containerLogMaxSize)
	if err != nil {
		return fmt.Errorf("--container-log-max-size: %w", err)
	}
	if l.podMaxPids == 0 {
		return errors.New("--pod-max-pids must be positive, or -1 for no limit")
	}
	l.limits = podworker.Limits{
		PodPids:     l.podMaxPids,
		LogRotation: containerlog.Rotation{MaxSize: size.Value(), MaxFiles: l.containerLogMaxFiles},
	}
	if err := l.limits.LogRotation.Validate(); err != nil {
		return fmt.Errorf("--container-log-max-size, --container-log-max-files: %w", err)
	}
	return nil
}

// chooseCapacity sets the node's capacity from --node-cpu and
// --node-memory and the machine.
func (l *localFlags) chooseCapacity() error {
	var err error
	if l.machine == (node.Machine{}) {
		if l.machine, err = node.ReadMachine(); err != nil {
			return err
		}
	}
	l.capacity, err = node.ChooseCapacity(l.machine, l.nodeCPU, l.nodeMemory, flagNodeCPU, flagNodeMemory)
	return err
}

// reportCapacity says what the local node advertises, and warns of
// overcommitted memory.
func (l *localFlags) reportCapacity() {
	fmt.Fprintf(os.Stderr, "ray-local: the local node advertises %s\n", l.capacity.Note)
	if l.capacity.Overcommitted {
		fmt.Fprintf(os.Stderr, "ray-local: warning: --%s=%s is more than the machine's memory: pods scheduled by their requests may be OOM-killed\n", flagNodeMemory, l.nodeMemory)
	}
}

func (l *localFlags) kubeconfigPath() string { return filepath.Join(l.stateDir, "kubeconfig") }

func gatherEnvironment(l *localFlags) environment {
	l.rayVenv, l.redisServer = os.Getenv("RAY_OPERATOR_RAY_VENV"), os.Getenv("RAY_OPERATOR_REDIS_SERVER")
	l.rayInstaller = os.Getenv("RAY_OPERATOR_RAY_INSTALLER")
	env := environment{
		kubeconfigEnv: os.Getenv("KUBECONFIG"),
		inCluster:     os.Getenv("KUBERNETES_SERVICE_HOST") != "",
		ownKubeconfig: l.kubeconfigPath(),
		forceLocal:    l.forceLocal,
	}
	if home, err := os.UserHomeDir(); err == nil {
		env.homeKubeconfig = filepath.Join(home, ".kube", "config")
		_, statErr := os.Stat(env.homeKubeconfig)
		env.homeKubeconfigSet = statErr == nil
	}
	return env
}

// connect returns a client config for the target, with the CRDs installed,
// and a function that releases what it started.
func connect(ctx context.Context, cancel context.CancelFunc, tgt target, l *localFlags) (*rest.Config, func(), error) {
	if tgt.local && !l.simulated {
		return startLocalCluster(ctx, cancel, l)
	}
	if tgt.local {
		return startLocal(ctx, cancel, l)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{l.crdDir}, ErrorIfPathMissing: true}); err != nil {
		return nil, nil, fmt.Errorf("installing the CRDs of %s: %w", l.crdDir, err)
	}
	return cfg, func() {}, nil
}

// startLocal starts the local control plane, which installs the CRDs and
// writes the kubeconfig, and prints how to reach it. Should the control
// plane stop on its own, cancel stops the operator too.
func startLocal(ctx context.Context, cancel context.CancelFunc, l *localFlags) (*rest.Config, func(), error) {
	began := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		StateDir:       l.stateDir,
		Nodes:          l.nodes,
		CRDDirs:        []string{l.crdDir},
		KubeconfigPath: l.kubeconfigPath(),
	})
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(os.Stderr, "ray-local: control plane ready in %v with %d simulated nodes; component logs in %s\n",
		time.Since(began).Round(time.Millisecond), l.nodes, l.stateDir)
	fmt.Printf("export KUBECONFIG=%s\n", cp.KubeconfigPath)
	go func() {
		<-cp.Done()
		cancel()
	}()
	stop := func() {
		if err := cp.Stop(); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "ray-local: stopping the control plane:", err)
		}
	}
	return cp.RESTConfig, stop, nil
}

// startLocalCluster starts the local cluster whose node runs real pods and
// prints how to reach it. Should a control-plane component or the node
// process stop on its own, cancel stops the operator and the cluster too.
func startLocalCluster(ctx context.Context, cancel context.CancelFunc, l *localFlags) (*rest.Config, func(), error) {
	if l.rayVenv == "" {
		return nil, nil, errors.New("RAY_OPERATOR_RAY_VENV is not set: Ray images run from that virtualenv (`make run` sets it from hack/ray-venv.sh); or pass --simulated")
	}
	began := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		StateDir:            l.stateDir,
		CRDDirs:             []string{l.crdDir},
		KubeconfigPath:      l.kubeconfigPath(),
		RayVenvDir:          l.rayVenv,
		RedisServer:         l.redisServer,
		RayInstaller:        l.rayInstaller,
		Logger:              ctrl.Log.WithName("local"),
		AllowHostPrivileges: l.allowHostPrivileges,
		SharedHostDirs:      l.sharedHostDirs,
		CertManager:         l.certManager,
		SyncFrequency:       l.syncFrequency,
		Limits:              l.limits,
		Capacity:            l.capacity.Resources,
		CapacityNote:        l.capacity.Note,
		Kueue:               l.kueue,
		Gateway:             l.gateway,
		Registry:            l.registry,
	})
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(os.Stderr, "ray-local: cluster ready in %v; node %s runs pods as real processes (docs/local.md); logs in %s\n",
		time.Since(began).Round(time.Millisecond), c.NodeName, l.stateDir)
	if l.registry.IsValid() {
		fmt.Fprintf(os.Stderr, "ray-local: image registry at %s, reached by this host and the node only: make push IMAGE=%s/<name>:<tag>, then run the image by that reference\n", l.registry, l.registry)
	}
	fmt.Printf("export KUBECONFIG=%s\n", c.KubeconfigPath())
	go func() {
		// A node process that exits on its own stops everything.
		select {
		case <-c.ControlPlane.Done():
		case err := <-c.NodeDied():
			fmt.Fprintln(os.Stderr, "ray-local: stopping:", err)
		}
		cancel()
	}()
	stop := func() {
		stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer stopCancel()
		if err := c.Stop(stopCtx); err != nil {
			fmt.Fprintln(os.Stderr, "ray-local: stopping the local cluster:", err)
		}
	}
	return c.RESTConfig(), stop, nil
}
