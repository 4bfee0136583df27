package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// SeccompType says which seccomp filter a container runs under.
type SeccompType string

// The seccomp filters of a container, as Kubernetes' seccompProfile types.
const (
	// SeccompUnconfined is no filter (the kubelet's default).
	SeccompUnconfined SeccompType = ""
	// SeccompRuntimeDefault is the sandbox's default filter (see
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

// seccompFor is the filter of c with the capability set caps (without the
// CAP_ prefix), nil for none.
func seccompFor(c ContainerSpec, caps []string) (*specs.LinuxSeccomp, error) {
	switch c.Seccomp.Type {
	case SeccompUnconfined:
		return nil, nil
	case SeccompRuntimeDefault:
		return defaultSeccomp(caps), nil
	case SeccompLocalhost:
		if c.Seccomp.Profile == nil {
			return nil, errors.New("a Localhost seccomp profile without its content")
		}
		return c.Seccomp.Profile, nil
	}
	return nil, fmt.Errorf("unknown seccomp profile type %q", c.Seccomp.Type)
}

// The default filter lets every system call through but those that
// container runtimes' default profiles (containerd's, Docker's) refuse to a
// container: they reach past the container's namespaces to the kernel or
// the machine (modules, kexec, swap, the keyring, io_uring, the clock,
// raw I/O ports), or make new namespaces and mounts. As in those profiles,
// a capability the container holds lifts the refusal of the calls it
// governs (CAP_SYS_ADMIN: mount, unshare, setns, namespace flags of clone,
// ...), and a refused call fails with EPERM (clone3 with ENOSYS, so that
// the C library falls back to clone, which the filter can inspect).
//
// Unlike those profiles, which list what is allowed, it lists what is
// refused: a system call newer than the list is allowed, where they refuse
// it; and personality(2) is not narrowed to its harmless settings.
var (
	seccompAlwaysRefused = []string{
		"_sysctl", "add_key", "create_module", "get_kernel_syms", "io_uring_enter", "io_uring_register",
		"io_uring_setup", "kexec_file_load", "kexec_load", "keyctl", "nfsservctl", "query_module",
		"request_key", "uselib", "vm86", "vm86old",
	}
	seccompByCapability = map[string][]string{
		"SYS_ADMIN": {
			"bpf", "fanotify_init", "fsconfig", "fsmount", "fsopen", "fspick", "lookup_dcookie", "mount",
			"mount_setattr", "move_mount", "name_to_handle_at", "open_tree", "perf_event_open", "pivot_root",
			"quotactl", "quotactl_fd", "setdomainname", "sethostname", "setns", "swapoff", "swapon", "syslog",
			"umount", "umount2", "unshare",
		},
		"BPF":             {"bpf"},
		"PERFMON":         {"perf_event_open"},
		"SYSLOG":          {"syslog"},
		"SYS_BOOT":        {"reboot"},
		"SYS_MODULE":      {"delete_module", "finit_module", "init_module"},
		"SYS_PACCT":       {"acct"},
		"SYS_PTRACE":      {"kcmp", "pidfd_getfd", "process_madvise", "userfaultfd"},
		"SYS_RAWIO":       {"ioperm", "iopl"},
		"SYS_TIME":        {"clock_adjtime", "clock_adjtime64", "clock_settime", "clock_settime64", "settimeofday", "stime"},
		"SYS_TTY_CONFIG":  {"vhangup"},
		"SYS_NICE":        {"get_mempolicy", "mbind", "set_mempolicy", "set_mempolicy_home_node"},
		"DAC_READ_SEARCH": {"open_by_handle_at"},
	}
	// cloneNamespaceFlags are clone(2)'s flags that make namespaces:
	// NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
	cloneNamespaceFlags = []uint64{0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000}
)

// afVsock is the address family of virtual machine sockets, which the
// default profiles refuse.
const afVsock = 40

// Errnos of refused calls.
const (
	errnoEPERM  = 1
	errnoENOSYS = 38
)

// defaultSeccomp is the default filter for a container with caps.
func defaultSeccomp(caps []string) *specs.LinuxSeccomp {
	refused := map[string]bool{}
	for _, name := range seccompAlwaysRefused {
		refused[name] = true
	}
	for _, calls := range seccompByCapability {
		for _, name := range calls {
			refused[name] = true
		}
	}
	// A call governed by two capabilities (bpf, perf_event_open, syslog)
	// is allowed by either.
	for _, held := range caps {
		for _, name := range seccompByCapability[held] {
			delete(refused, name)
		}
	}
	names := make([]string, 0, len(refused))
	for name := range refused {
		names = append(names, name)
	}
	slices.Sort(names)
	eperm, enosys := uint(errnoEPERM), uint(errnoENOSYS)
	rules := []specs.LinuxSyscall{
		{Names: names, Action: specs.ActErrno, ErrnoRet: &eperm},
		{Names: []string{"socket"}, Action: specs.ActErrno, ErrnoRet: &eperm, Args: []specs.LinuxSeccompArg{{Index: 0, Value: afVsock, Op: specs.OpEqualTo}}},
	}
	if !slices.Contains(caps, "SYS_ADMIN") {
		rules = append(rules, specs.LinuxSyscall{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys})
		for _, flag := range cloneNamespaceFlags {
			rules = append(rules, specs.LinuxSyscall{
				Names: []string{"clone"}, Action: specs.ActErrno, ErrnoRet: &eperm,
				Args: []specs.LinuxSeccompArg{{Index: cloneFlagsArg, Value: flag, ValueTwo: flag, Op: specs.OpMaskedEqual}},
			})
		}
	}
	return &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Architectures: seccompArchitectures(), Syscalls: rules}
}

// cloneFlagsArg is the index of clone(2)'s flags (the first argument on
// x86 and ARM).
const cloneFlagsArg = 0

// seccompArchitectures are the machine's architecture and those whose
// programs it runs too, which the filter must cover.
func seccompArchitectures() []specs.Arch {
	switch runtime.GOARCH {
	case "amd64":
		return []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32}
	case "arm64":
		return []specs.Arch{specs.ArchAARCH64, specs.ArchARM}
	}
	return nil
}
