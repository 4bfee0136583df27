package node

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// The adapters below map the pod worker's small interfaces onto the sandbox
// and podinputs packages.

// hostRuntime creates sandboxes on a sandbox.Host.
type hostRuntime struct{ host *sandbox.Host }

var _ runtime = hostRuntime{}

func (r hostRuntime) CreateSandbox(ctx context.Context, spec sandboxSpec) (podSandbox, error) {
	aliases := make([]sandbox.HostEntry, 0, len(spec.HostAliases))
	for _, a := range spec.HostAliases {
		aliases = append(aliases, sandbox.HostEntry{IP: a.IP, Hostnames: a.Hostnames})
	}
	sb, err := r.host.CreateSandbox(ctx, sandbox.SandboxSpec{
		UID: spec.UID, Namespace: spec.Namespace, Name: spec.Name,
		Hostname: spec.Hostname, Subdomain: spec.Subdomain, ClusterDomain: spec.ClusterDomain,
		ShmSizeBytes: spec.ShmSizeBytes,
		DNS:          sandbox.DNSConfig{Nameservers: spec.DNS.Nameservers, Searches: spec.DNS.Searches, Options: spec.DNS.Options},
		HostAliases:  aliases,
		HostNetwork:  spec.HostNetwork,
	})
	if err != nil {
		return nil, err
	}
	return sandboxAdapter{sb}, nil
}

// sandboxAdapter is a podSandbox on a *sandbox.Sandbox.
type sandboxAdapter struct{ sb *sandbox.Sandbox }

func (s sandboxAdapter) IP() netip.Addr                    { return s.sb.IP() }
func (s sandboxAdapter) Dir() string                       { return s.sb.Dir() }
func (s sandboxAdapter) Destroy(ctx context.Context) error { return s.sb.Destroy(ctx) }
func (s sandboxAdapter) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return s.sb.DialContext(ctx, network, address)
}

func (s sandboxAdapter) Start(ctx context.Context, spec containerSpec) (process, error) {
	mounts := make([]sandbox.Mount, 0, len(spec.Mounts))
	for _, m := range spec.Mounts {
		mounts = append(mounts, sandbox.Mount{Source: m.Source, Destination: m.Destination, ReadOnly: m.ReadOnly})
	}
	c, err := s.sb.Start(ctx, sandbox.ContainerSpec{
		Name: spec.Name, Attempt: spec.Attempt, Args: spec.Args, Env: spec.Env, WorkingDir: spec.WorkingDir,
		Mounts: mounts, UID: spec.UID, GID: spec.GID, Privileged: spec.Privileged,
		CapAdd: spec.CapAdd, CapDrop: spec.CapDrop,
		MemoryLimitBytes: spec.MemoryLimitBytes, CPUMillis: spec.CPUMillis,
		Stdout: spec.Stdout, Stderr: spec.Stderr,
	})
	if err != nil {
		return nil, err
	}
	return containerAdapter{c}, nil
}

// containerAdapter is a process on a *sandbox.Container.
type containerAdapter struct{ c *sandbox.Container }

func (a containerAdapter) ID() string                      { return a.c.ID() }
func (a containerAdapter) Done() <-chan struct{}           { return a.c.Done() }
func (a containerAdapter) ExitCode() int                   { return a.c.ExitCode() }
func (a containerAdapter) StartedAt() time.Time            { return a.c.StartedAt() }
func (a containerAdapter) FinishedAt() time.Time           { return a.c.FinishedAt() }
func (a containerAdapter) Signal(sig syscall.Signal) error { return a.c.Signal(sig) }
func (a containerAdapter) Kill() error                     { return a.c.Kill() }

func (a containerAdapter) Exec(ctx context.Context, spec execSpec) (int, error) {
	var resize chan sandbox.TerminalSize
	if spec.Resize != nil {
		resize = make(chan sandbox.TerminalSize)
		go func() {
			defer close(resize)
			for s := range spec.Resize {
				resize <- sandbox.TerminalSize{Width: s.Width, Height: s.Height}
			}
		}()
	}
	return a.c.Exec(ctx, sandbox.ExecSpec{
		Args: spec.Args, Env: spec.Env, Stdin: spec.Stdin, Stdout: spec.Stdout, Stderr: spec.Stderr,
		TTY: spec.TTY, Resize: resize,
	})
}

// podInputs resolves images with an image table and the rest with
// podinputs against the API.
type podInputs struct {
	images podinputs.ImageTable
	objs   podinputs.Objects
}

var _ inputs = (*podInputs)(nil)

func (in *podInputs) Image(ref string) (image, error) {
	img, err := in.images.Resolve(ref)
	if err != nil {
		var noLocal *podinputs.NoLocalImageError
		if errors.As(err, &noLocal) {
			return image{}, &waitingError{Reason: reasonErrImagePull, Message: err.Error()}
		}
		return image{}, err
	}
	return image{Ref: ref, Local: img.Local, ID: "local://" + ref, WorkingDir: img.WorkingDir}, nil
}

func (in *podInputs) Volumes(ctx context.Context, pod *corev1.Pod, dir string, facts podFacts) (podVolumes, error) {
	vols, err := podinputs.Volumes(ctx, in.objs, pod, dir, toFacts(facts))
	if err != nil {
		return nil, configWaiting(err, reasonContainerCreating)
	}
	return &volumesAdapter{vols: vols, objs: in.objs}, nil
}

func (in *podInputs) Container(ctx context.Context, pod *corev1.Pod, c *corev1.Container, img image, vols podVolumes, facts podFacts) (containerInputs, error) {
	full, err := in.images.Resolve(img.Ref)
	if err != nil {
		return containerInputs{}, err
	}
	env, err := podinputs.Env(ctx, in.objs, pod, c, full, toFacts(facts))
	if err != nil {
		return containerInputs{}, configWaiting(err, reasonConfigError)
	}
	args, err := podinputs.Argv(full, c, env)
	if err != nil {
		return containerInputs{}, configWaiting(err, reasonConfigError)
	}
	mounts, err := podinputs.ExpandedMounts(c, vols.(*volumesAdapter).vols, env)
	if err != nil {
		return containerInputs{}, configWaiting(err, reasonConfigError)
	}
	out := containerInputs{Args: args, Env: env}
	for _, m := range mounts {
		out.Mounts = append(out.Mounts, mount{Source: m.Source, Destination: m.Destination, ReadOnly: m.ReadOnly})
	}
	return out, nil
}

// configWaiting maps a *podinputs.ConfigError onto a waiting reason.
func configWaiting(err error, reason string) error {
	var ce *podinputs.ConfigError
	if errors.As(err, &ce) {
		return &waitingError{Reason: ce.Reason, Message: ce.Message}
	}
	return &waitingError{Reason: reason, Message: err.Error()}
}

// volumesAdapter is podVolumes on *podinputs.PodVolumes.
type volumesAdapter struct {
	vols *podinputs.PodVolumes
	objs podinputs.Objects
}

func (v *volumesAdapter) Refresh(ctx context.Context, pod *corev1.Pod, facts podFacts) error {
	return v.vols.Refresh(ctx, v.objs, pod, toFacts(facts))
}

func (v *volumesAdapter) Release() error { return v.vols.Release() }

func toFacts(f podFacts) podinputs.PodFacts {
	return podinputs.PodFacts{
		PodIP: f.PodIP, HostIP: f.HostIP, NodeName: f.NodeName,
		NodeAllocatable: f.NodeAllocatable, KubernetesService: f.KubernetesService,
	}
}
