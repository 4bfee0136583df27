package podworker

import (
	"context"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// The worker reaches the sandbox and podinputs packages only through the
// small interfaces below, which take and return those packages' own types,
// so that the state machine is tested on in-memory fakes and nothing is
// copied field by field. *sandbox.Container is a Process as it is; the
// node wraps *sandbox.Host and *sandbox.Sandbox only because Go methods
// cannot return an interface where the concrete type returns a pointer.

// Runtime creates pod sandboxes.
type Runtime interface {
	// CreateSandbox creates the network namespace and directory of a pod.
	CreateSandbox(ctx context.Context, spec sandbox.SandboxSpec) (Sandbox, error)
}

// Sandbox is one pod's network namespace and directory.
type Sandbox interface {
	// IP is the pod's address.
	IP() netip.Addr
	// Dir is the pod's directory on the host (volumes, logs).
	Dir() string
	// HostIDs are the host uid and gid of a container id: root in a user
	// namespace is an unprivileged host user.
	HostIDs(uid, gid uint32) (int, int)
	// DialContext connects from inside the pod's network namespace.
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
	// Start starts one attempt of a container.
	Start(ctx context.Context, spec sandbox.ContainerSpec) (Process, error)
	// Adopted are the attempts the sandbox held when the node adopted it
	// from an earlier node agent (running, or ended meanwhile); none for a
	// sandbox created by this one.
	Adopted() []Adoptee
	// Destroy stops what still runs and removes the sandbox.
	Destroy(ctx context.Context) error
}

// Process is one attempt of a container.
type Process interface {
	// ID is the attempt's runtime id.
	ID() string
	// Done is closed once the attempt has ended and been cleaned up.
	Done() <-chan struct{}
	// ExitCode is the exit code once Done is closed.
	ExitCode() int
	// StartedAt and FinishedAt are when the attempt started and ended.
	StartedAt() time.Time
	FinishedAt() time.Time
	// Signal sends sig to the attempt's process.
	Signal(sig syscall.Signal) error
	// Kill sends SIGKILL.
	Kill() error
	// Exec runs a command in the attempt's namespaces and returns its exit
	// code.
	Exec(ctx context.Context, spec sandbox.ExecSpec) (int, error)
	// Attach streams the attempt's output to a client, and the client's
	// input to the attempt's stdin, until either ends.
	Attach(ctx context.Context, spec sandbox.AttachSpec) error
	// Usage reads the attempt's CPU and memory from its cgroups.
	Usage() (sandbox.Usage, error)
	// WritableDir is the host directory of the attempt's writable layer.
	WritableDir() string
	// ReopenLog has the attempt's output go to a new file at logPath,
	// once a rotation renamed the current one.
	ReopenLog(logPath string) error
}

var _ Process = (*sandbox.Container)(nil)

// Inputs resolves what a pod's containers are given (images, volumes,
// argv, environment, mounts). Errors that leave a container waiting are
// *podinputs.ConfigError values.
type Inputs interface {
	// Image resolves an image reference at once, without a registry (a
	// registry image has RootFS set when the node's store holds it); any
	// error leaves the container waiting with reason ErrImagePull.
	Image(ref string) (Image, error)
	// Pull makes an image that Image resolved present on the machine when
	// its RayRelease says it is not (installing a Ray release takes up to
	// minutes: it runs off the worker's goroutine), or pulls a registry
	// image (Registry) with pod's imagePullSecrets. An error is an image
	// pull failure.
	Pull(ctx context.Context, pod *corev1.Pod, img Image) (Image, error)
	// Volumes writes the pod's volumes below dir.
	Volumes(ctx context.Context, pod *corev1.Pod, dir string, facts podinputs.PodFacts) (Volumes, error)
	// Container resolves argv, environment and mounts of one container.
	Container(ctx context.Context, pod *corev1.Pod, c *corev1.Container, img Image, vols Volumes, facts podinputs.PodFacts) (ContainerInputs, error)
}

// Volumes are a pod's volumes on the host.
type Volumes interface {
	// Mounts are the container's volumeMounts as bind mounts, subPathExpr
	// expanded from env.
	Mounts(c *corev1.Container, env []string) ([]sandbox.Mount, error)
	// Refresh rewrites the volumes that follow API objects.
	Refresh(ctx context.Context, pod *corev1.Pod, facts podinputs.PodFacts) error
	// Release unmounts and removes what the volumes hold.
	Release() error
}

// Image is a resolved image and the imageID the pod's status shows for it.
type Image struct {
	podinputs.Image
	// ID is the container status' imageID.
	ID string
}

// ContainerInputs are a container's resolved argv, environment and mounts.
type ContainerInputs struct {
	// Args is argv.
	Args []string
	// Env is the complete environment, KEY=VALUE.
	Env []string
	// Mounts are the container's volume mounts.
	Mounts []sandbox.Mount
}

// Deps are what every pod worker of a node shares.
type Deps struct {
	// Runtime creates the pods' sandboxes.
	Runtime Runtime
	// Inputs resolves images, volumes and container inputs.
	Inputs Inputs
	// Clock drives back-off, probes, grace periods and log timestamps.
	Clock clock.WithTicker
	// Recorder receives the pods' events (Pulled, Started, BackOff...).
	Recorder record.EventRecorder
	// Log receives the workers' logs.
	Log logr.Logger
	// Node is what pods learn about their node.
	Node NodeInfo
	// HostAccess decides which pods the node admits (the zero Policy:
	// none that needs root on the host or a hostPath volume).
	HostAccess hostaccess.Policy
	// Notify receives the pod (spec and status) whenever its status
	// changes.
	Notify func(*corev1.Pod)
	// Finalize is called once a deleted pod has stopped and its sandbox is
	// gone, to remove the pod object (a kubelet's final delete).
	Finalize func(ctx context.Context, pod *corev1.Pod)
	// SyncFrequency is how often a pod's configMap, secret, downwardAPI
	// and projected volumes are rewritten from the API (the kubelet's
	// syncFrequency); zero means DefaultSyncFrequency.
	SyncFrequency time.Duration
	// Limits are what the node bounds every pod by (pids, logs, how often
	// local storage is measured); zero fields take their defaults.
	Limits Limits
}

// syncFrequency is d.SyncFrequency or its default.
func (d *Deps) syncFrequency() time.Duration {
	if d.SyncFrequency > 0 {
		return d.SyncFrequency
	}
	return DefaultSyncFrequency
}

// NodeInfo is what pods learn about the node they run on.
type NodeInfo struct {
	// Name is the Node's name.
	Name string
	// HostIP is the node's address (status.hostIP).
	HostIP netip.Addr
	// Allocatable is what resourceFieldRef limits give for a container
	// without that limit.
	Allocatable corev1.ResourceList
	// ClusterDNS are the nameservers of pods with dnsPolicy ClusterFirst.
	ClusterDNS []string
	// ClusterDomain is the cluster's DNS domain.
	ClusterDomain string
	// KubernetesService is ClusterIP:port of default/kubernetes.
	KubernetesService netip.AddrPort
	// SeccompDir holds the Localhost seccomp profiles, as a kubelet's
	// <root-dir>/seccomp; "" for none (Localhost profiles are refused).
	SeccompDir string
}
