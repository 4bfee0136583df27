package node

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
	"github.com/ray-operator/ray-operator/local/internal/imagestore"
	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// Settings is what of a node's configuration is plain data: a node
// process reads it from a file (local/internal/cluster).
type Settings struct {
	// NodeName is the Node's name; default "ray-local".
	NodeName string
	// ClusterDNS are the nameservers of pods with dnsPolicy ClusterFirst.
	ClusterDNS []string
	// ClusterDomain is the cluster's DNS domain; default "cluster.local".
	ClusterDomain string
	// KubernetesService is ClusterIP:443 of default/kubernetes, for pods'
	// KUBERNETES_SERVICE_* variables.
	KubernetesService netip.AddrPort
	// ListenAddress is where the kubelet API listens (https); its address is
	// the node's InternalIP.
	ListenAddress netip.AddrPort
	// ClientCA (PEM), when set, makes the kubelet API require client
	// certificates it signed.
	ClientCA []byte
	// Capacity is the node's capacity and allocatable; default
	// ChooseCapacity's (CPUPerMachineCPU times the machine's CPUs, at least
	// MinDefaultCPU; the machine's memory; 110 pods).
	Capacity corev1.ResourceList
	// CapacityNote says why the node advertises Capacity, shown on the
	// Node as the CapacityAnnotation; default ChooseCapacity's note when
	// Capacity is defaulted, else none.
	CapacityNote string
	// AllowHostPrivileges admits pods that need root on the host
	// (privileged containers, hostNetwork, hostPID, hostIPC, hostUsers:
	// true) and runs them without a user namespace; default false: such
	// pods are refused (package hostaccess).
	AllowHostPrivileges bool
	// SharedHostDirs are the host directories (absolute, existing) under
	// which hostPath volumes are admitted; default none: every hostPath
	// volume is refused.
	SharedHostDirs []string
	// VolumeDir, when set, is where the node's provisioner keeps the
	// directories of the persistent volumes it provisions for claims of the
	// default StorageClass (package localpv), which the node installs; the
	// node mounts persistent volumes under it. Default none: claims of
	// that class stay pending.
	VolumeDir string
	// VolumeImageDir holds the file of each provisioned volume's
	// filesystem, which the node mounts on the volume's directory under
	// VolumeDir; default VolumeDir with "-images" appended, beside it.
	VolumeImageDir string
	// SeccompDir holds the seccomp profiles pods name with
	// seccompProfile type Localhost (localhostProfile is a path relative to
	// it), as a kubelet's <root-dir>/seccomp; default none: such pods'
	// containers do not start (CreateContainerError).
	SeccompDir string
	// SyncFrequency is how often pods' configMap, secret, downwardAPI and
	// projected volumes are rewritten from the API, as the kubelet's
	// --sync-frequency; zero means podworker.DefaultSyncFrequency (1 min).
	SyncFrequency time.Duration
	// Limits bound every pod besides what its spec asks for: pids.max of
	// its cgroup (default podworker.DefaultPodPidsLimit, 4096), its
	// containers' log rotation (the kubelet's 10Mi, 5 files, checked every
	// 10 s) and how often emptyDir sizeLimits and ephemeral-storage limits
	// are measured (10 s). Memory is bounded by the node's allocatable
	// memory (Capacity) for all pods together.
	Limits podworker.Limits
}

// Config configures Start.
type Config struct {
	Settings
	// RESTConfig holds admin credentials of the local API server.
	RESTConfig *rest.Config
	// Sandboxes runs the pods; the caller makes it and closes it after
	// Stop. When it adopted an earlier node agent's sandboxes
	// (sandbox.HostConfig.Adopt), the pod workers take their running
	// containers over, with what the pods' statuses in the API say of
	// earlier attempts, and Start destroys those of pods the API no longer
	// binds to the node.
	Sandboxes *sandbox.Host
	// Images maps image references to local executables.
	Images podinputs.ImageTable
	// ImageStore pulls and holds the images of references Images has no
	// rule for, from their registries; nil: such references fail with
	// ErrImagePull, naming the rules.
	ImageStore *imagestore.Store
	// Clock defaults to the real clock.
	Clock clock.WithTicker
	// Log receives the node's logs.
	Log logr.Logger
}

// Start registers the node and runs every pod scheduled to it. It returns
// once the Node is Ready in the API; Stop, or canceling ctx, stops it.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Sandboxes == nil || cfg.RESTConfig == nil {
		return nil, errors.New("node.Config: Sandboxes and RESTConfig are required")
	}
	if !cfg.ListenAddress.IsValid() || cfg.ListenAddress.Port() == 0 {
		return nil, errors.New("node.Config: ListenAddress must be an address and a port")
	}
	access, err := hostaccess.NewPolicy(cfg.AllowHostPrivileges, cfg.SharedHostDirs)
	if err != nil {
		return nil, fmt.Errorf("node.Config.SharedHostDirs: %w", err)
	}
	if cfg.VolumeDir != "" {
		if err := os.MkdirAll(cfg.VolumeDir, 0o755); err != nil {
			return nil, fmt.Errorf("node.Config.VolumeDir: %w", err)
		}
		if access, err = access.WithVolumeDir(cfg.VolumeDir); err != nil {
			return nil, fmt.Errorf("node.Config.VolumeDir: %w", err)
		}
		if cfg.VolumeImageDir == "" {
			cfg.VolumeImageDir = filepath.Clean(cfg.VolumeDir) + "-images"
		}
		if err := os.MkdirAll(cfg.VolumeImageDir, 0o700); err != nil {
			return nil, fmt.Errorf("node.Config.VolumeImageDir: %w", err)
		}
	}
	client, err := kubernetes.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the API client: %w", err)
	}
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	mem := cfg.Capacity[corev1.ResourceMemory]
	if err := cfg.Sandboxes.LimitPodsMemory(mem.Value()); err != nil {
		return nil, fmt.Errorf("bounding the pods' memory by the node's allocatable %s: %w", mem.String(), err)
	}
	in := localInputs{images: cfg.Images, store: cfg.ImageStore, objs: podinputs.ClientObjects(client)}
	n, err := startNode(ctx, cfg, client, hostRuntime{host: cfg.Sandboxes}, in, access)
	if err != nil {
		return nil, err
	}
	if cfg.ImageStore != nil {
		n.startImageGC(cfg.ImageStore, cfg.ImageStore.Dir())
	}
	if err := n.destroyOrphans(ctx, cfg.Sandboxes); err != nil {
		n.log.Error(err, "Destroying the adopted sandboxes of pods that are gone")
	}
	return n, nil
}

// withDefaults returns cfg with its defaults applied.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.NodeName == "" {
		cfg.NodeName = "ray-local"
	}
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = "cluster.local"
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Capacity == nil {
		m, err := ReadMachine()
		if err != nil {
			return cfg, err
		}
		capacity, err := ChooseCapacity(m, "", "", "node-cpu", "node-memory")
		if err != nil {
			return cfg, err
		}
		cfg.Capacity, cfg.CapacityNote = capacity.Resources, capacity.Note
	}
	if err := cfg.Limits.Validate(); err != nil {
		return cfg, fmt.Errorf("node.Config.Limits: %w", err)
	}
	cfg.Limits = cfg.Limits.WithDefaults()
	return cfg, nil
}

// machineMemory reads MemTotal from /proc/meminfo.
func machineMemory() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading the machine's memory: %w", err)
	}
	return parseMemTotal(data)
}

// parseMemTotal returns MemTotal in bytes.
func parseMemTotal(meminfo []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kib, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing MemTotal: %w", err)
			}
			return kib * 1024, nil
		}
	}
	return 0, errors.New("no MemTotal in /proc/meminfo")
}
