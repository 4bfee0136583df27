package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"

	mobyseccomp "github.com/moby/profiles/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// SeccompType says which seccomp filter a container runs under.
type SeccompType string

// The seccomp filters of a container, as Kubernetes' seccompProfile types.
const (
	// SeccompUnconfined is no filter (the kubelet's default).
	SeccompUnconfined SeccompType = ""
	// SeccompRuntimeDefault is the container runtimes' default filter (see
	// defaultSeccomp).
	SeccompRuntimeDefault SeccompType = "RuntimeDefault"
	// SeccompLocalhost is a profile the caller loaded (Seccomp.Profile).
	SeccompLocalhost SeccompType = "Localhost"
)

// Seccomp is a container's seccomp filter.
type Seccomp struct {
	// Type picks the filter.
	Type SeccompType
	// Profile is the filter of SeccompLocalhost (see ParseSeccompProfile).
	Profile *specs.LinuxSeccomp
}

// ParseSeccompProfile reads a seccomp profile in the OCI (and Docker)
// JSON format: defaultAction, architectures, syscalls.
func ParseSeccompProfile(data []byte) (*specs.LinuxSeccomp, error) {
	var p specs.LinuxSeccomp
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("not a seccomp profile: %w", err)
	}
	if p.DefaultAction == "" {
		return nil, errors.New("not a seccomp profile: no defaultAction")
	}
	return &p, nil
}

// seccompFor is the filter of c whose process holds the bounding
// capabilities caps (with the CAP_ prefix, as in the OCI spec), nil for
// none.
func seccompFor(c ContainerSpec, caps []string) (*specs.LinuxSeccomp, error) {
	switch c.Seccomp.Type {
	case SeccompUnconfined:
		return nil, nil
	case SeccompRuntimeDefault:
		return defaultSeccomp(caps)
	case SeccompLocalhost:
		if c.Seccomp.Profile == nil {
			return nil, errors.New("a Localhost seccomp profile without its content")
		}
		return c.Seccomp.Profile, nil
	}
	return nil, fmt.Errorf("unknown seccomp profile type %q", c.Seccomp.Type)
}

// defaultSeccomp is RuntimeDefault for a process holding caps: the default
// profile of Docker and containerd, as moby's profiles library keeps it. It
// is an allow list (any other system call fails with EPERM) over the
// machine's architecture and those whose programs it runs; some calls are
// allowed only to a process holding a capability (mount and unshare with
// CAP_SYS_ADMIN, ptrace's relatives with CAP_SYS_PTRACE, ...), some only
// with harmless arguments (personality, clone without namespace flags,
// socket outside AF_VSOCK), some only on kernels new enough.
func defaultSeccomp(caps []string) (*specs.LinuxSeccomp, error) {
	process := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{Bounding: caps}}}
	p, err := mobyseccomp.GetDefaultProfile(process)
	if err != nil {
		return nil, fmt.Errorf("the default seccomp profile: %w", err)
	}
	return p, nil
}
