package node

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The pod worker reaches the sandbox and podinputs packages only through the
// small interfaces below, so that the lifecycle state machine is tested on
// in-memory fakes. adapters.go maps them onto the real packages.

// runtime creates pod sandboxes.
type runtime interface {
	CreateSandbox(ctx context.Context, spec sandboxSpec) (podSandbox, error)
}

// podSandbox is one pod's network namespace and directory.
type podSandbox interface {
	IP() netip.Addr
	Dir() string
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
	Start(ctx context.Context, spec containerSpec) (process, error)
	Destroy(ctx context.Context) error
}

// process is one attempt of a container.
type process interface {
	ID() string
	Done() <-chan struct{}
	ExitCode() int
	StartedAt() time.Time
	FinishedAt() time.Time
	Signal(sig syscall.Signal) error
	Kill() error
	Exec(ctx context.Context, spec execSpec) (int, error)
}

// sandboxSpec describes the sandbox of a pod.
type sandboxSpec struct {
	UID, Namespace, Name string
	Hostname, Subdomain  string
	ClusterDomain        string
	ShmSizeBytes         int64
	DNS                  dnsConfig
	HostAliases          []corev1.HostAlias
	HostNetwork          bool
}

// dnsConfig is the content of a pod's /etc/resolv.conf.
type dnsConfig struct{ Nameservers, Searches, Options []string }

// mount is a bind mount of a host path into a container.
type mount struct {
	Source, Destination string
	ReadOnly            bool
}

// containerSpec is what the pod worker asks the sandbox to start.
type containerSpec struct {
	Name             string
	Attempt          int
	Args, Env        []string
	WorkingDir       string
	Mounts           []mount
	UID, GID         uint32
	Privileged       bool
	CapAdd, CapDrop  []string
	MemoryLimitBytes int64
	CPUMillis        int64
	Stdout, Stderr   io.Writer
}

// execSpec is a command run inside a running container.
type execSpec struct {
	Args, Env      []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	TTY            bool
	Resize         <-chan termSize
}

// termSize is a terminal's size.
type termSize struct{ Width, Height uint16 }

// inputs resolves what a pod's containers are given (images, volumes, argv,
// environment, mounts).
type inputs interface {
	// Image resolves an image reference; a *waitingError with reason
	// ErrImagePull when it has no local equivalent.
	Image(ref string) (image, error)
	// Volumes writes the pod's volumes below dir; a *waitingError when a
	// source is missing.
	Volumes(ctx context.Context, pod *corev1.Pod, dir string, facts podFacts) (podVolumes, error)
	// Container resolves argv, environment and mounts of one container; a
	// *waitingError with reason CreateContainerConfigError when a source is
	// missing.
	Container(ctx context.Context, pod *corev1.Pod, c *corev1.Container, img image, vols podVolumes, facts podFacts) (containerInputs, error)
}

// podVolumes are a pod's volumes on the host.
type podVolumes interface {
	Refresh(ctx context.Context, pod *corev1.Pod, facts podFacts) error
	Release() error
}

// image is the local equivalent of an image reference.
type image struct {
	Ref, Local, ID string
	WorkingDir     string
}

// containerInputs are a container's resolved argv, environment and mounts.
type containerInputs struct {
	Args, Env []string
	Mounts    []mount
}

// podFacts are the facts about where a pod runs.
type podFacts struct {
	PodIP, HostIP     netip.Addr
	NodeName          string
	NodeAllocatable   corev1.ResourceList
	KubernetesService netip.AddrPort
}

// waitingError is an error that leaves a container waiting with a reason,
// as a kubelet reports it (ErrImagePull, CreateContainerConfigError).
type waitingError struct {
	Reason, Message string
}

// Error implements error.
func (e *waitingError) Error() string { return e.Reason + ": " + e.Message }

// Waiting reasons and messages as a kubelet writes them.
const (
	reasonErrImagePull        = "ErrImagePull"
	reasonConfigError         = "CreateContainerConfigError"
	reasonCrashLoopBackOff    = "CrashLoopBackOff"
	reasonContainerCreating   = "ContainerCreating"
	reasonPodInitializing     = "PodInitializing"
	reasonCompleted           = "Completed"
	reasonError               = "Error"
	reasonPodCompleted        = "PodCompleted"
	reasonContainersNotReady  = "ContainersNotReady"
	reasonContainersNotInited = "ContainersNotInitialized"
)

// asWaiting returns err as a *waitingError, or one with the given reason.
func asWaiting(err error, reason string) *waitingError {
	var we *waitingError
	if errors.As(err, &we) {
		return we
	}
	return &waitingError{Reason: reason, Message: err.Error()}
}
