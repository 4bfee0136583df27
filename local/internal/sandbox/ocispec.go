package sandbox

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// nofileLimit is RLIMIT_NOFILE of every container (soft and hard) when the
// host may raise it: Ray runs `ulimit -n 65536`, which needs a hard limit at
// least that high.
const nofileLimit = 1048576

// cfsPeriodMicros is the CFS period the CPU quota is expressed in.
const cfsPeriodMicros = 100000

// defaultCapabilities is the usual container-runtime default set.
var defaultCapabilities = []string{
	"CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID",
	"SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE",
}

// allCapabilities is every capability of Linux 6.x, as Kubernetes names them.
var allCapabilities = []string{
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
	"SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
	"IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
	"SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
	"LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
	"WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
}

// maskedPaths and readonlyPaths hide or protect the host's kernel knobs from
// unprivileged containers, like other container runtimes do.
var (
	maskedPaths = []string{
		"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		"/sys/firmware", "/sys/devices/virtual/powercap",
	}
	readonlyPaths = []string{
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
	}
)

// containerFacts is what the sandbox knows about where one container runs.
type containerFacts struct {
	// RootfsPath is the container's mounted root with its layers (see
	// mountLayers), the host's system directories among them.
	RootfsPath string
	// IDs maps the container's ids to the host's: a user namespace unless
	// the pod runs with host users.
	IDs idMap
	// UsernsPath is the pod's user namespace, which the container joins.
	UsernsPath string
	// Hostname is the pod's hostname; empty for a host-network pod, which
	// keeps the host's UTS namespace.
	Hostname string
	// NetnsPath is the pod's network namespace; empty for a host-network pod.
	NetnsPath string
	// ShmDir is the pod's /dev/shm tmpfs.
	ShmDir string
	// ResolvConf, Hosts, HostnameFile and Profile are the pod's /etc files.
	ResolvConf, Hosts, HostnameFile, Profile string
	// CgroupsPath is the container's cgroup, relative to each hierarchy root.
	CgroupsPath string
	// NofileLimit is the container's RLIMIT_NOFILE (see hostNofileLimit).
	NofileLimit uint64
}

// runtimeSpec builds the OCI runtime spec of one container. It is a pure
// function of its arguments.
func runtimeSpec(c ContainerSpec, f containerFacts) (*specs.Spec, error) {
	if len(c.Args) == 0 {
		return nil, fmt.Errorf("container %q: no command", c.Name)
	}
	caps, err := capabilitySet(c)
	if err != nil {
		return nil, fmt.Errorf("container %q: %w", c.Name, err)
	}
	mounts, err := containerMounts(c, f)
	if err != nil {
		return nil, fmt.Errorf("container %q: %w", c.Name, err)
	}
	capNames := make([]string, len(caps))
	for i, name := range caps {
		capNames[i] = "CAP_" + name
	}
	seccomp, err := seccompFor(c, capNames)
	if err != nil {
		return nil, fmt.Errorf("container %q: %w", c.Name, err)
	}
	linux := linuxSection(c, f)
	linux.Seccomp = seccomp
	return &specs.Spec{
		Version:  specs.Version,
		Root:     &specs.Root{Path: f.RootfsPath, Readonly: c.ReadOnlyRoot},
		Hostname: f.Hostname,
		Process: &specs.Process{
			Terminal: c.TTY,
			User:     specs.User{UID: c.UID, GID: c.GID, AdditionalGids: slices.Clone(c.AdditionalGIDs)},
			Args:     slices.Clone(c.Args),
			Env:      processEnv(c),
			Cwd:      workingDir(c.WorkingDir),
			Capabilities: &specs.LinuxCapabilities{
				Bounding: capNames, Effective: slices.Clone(capNames), Permitted: slices.Clone(capNames),
			},
			NoNewPrivileges: c.NoNewPrivileges,
			Rlimits:         []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: f.NofileLimit, Soft: f.NofileLimit}},
		},
		Mounts: mounts,
		Linux:  linux,
	}, nil
}

// processEnv is the container's environment, with TERM for a terminal.
func processEnv(c ContainerSpec) []string {
	if c.TTY {
		return withTerm(c.Env)
	}
	return slices.Clone(c.Env)
}

func workingDir(dir string) string {
	if dir == "" {
		return "/"
	}
	return dir
}

// capabilitySet is the container's capabilities, sorted: every one for a
// privileged container; else, as container runtimes tweak their default
// set, the default set (every capability when CapAdd has "ALL"), emptied
// when CapDrop has "ALL" or less the dropped ones otherwise, plus the
// added ones (an added capability wins over its drop).
func capabilitySet(c ContainerSpec) ([]string, error) {
	if c.Privileged {
		return sortedCopy(allCapabilities), nil
	}
	// "ALL" in CapAdd is the base set, not an addition that would undo
	// the drops.
	add, err := normalizeCapabilities(slices.DeleteFunc(slices.Clone(c.CapAdd), isAll))
	if err != nil {
		return nil, err
	}
	drop, err := normalizeCapabilities(c.CapDrop)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	if !hasAll(c.CapDrop) {
		base := defaultCapabilities
		if hasAll(c.CapAdd) {
			base = allCapabilities
		}
		for _, name := range base {
			set[name] = !slices.Contains(drop, name)
		}
	}
	for _, name := range add {
		set[name] = true
	}
	out := make([]string, 0, len(set))
	for name, in := range set {
		if in {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// hasAll tells whether a capability list names "ALL".
func hasAll(names []string) bool { return slices.ContainsFunc(names, isAll) }

func isAll(name string) bool { return strings.EqualFold(name, "ALL") }

// normalizeCapabilities maps Kubernetes capability names ("NET_ADMIN", also
// "CAP_NET_ADMIN" and "ALL") to the names of allCapabilities.
func normalizeCapabilities(in []string) ([]string, error) {
	var out []string
	for _, name := range in {
		n := strings.TrimPrefix(strings.ToUpper(name), "CAP_")
		switch {
		case n == "ALL":
			out = append(out, allCapabilities...)
		case slices.Contains(allCapabilities, n):
			out = append(out, n)
		default:
			return nil, fmt.Errorf("unknown capability %q", name)
		}
	}
	return out, nil
}

func sortedCopy(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

// containerMounts lists the kernel file systems, the pod's shared /dev/shm
// and /etc files, a private /tmp, then the caller's bind mounts in order.
func containerMounts(c ContainerSpec, f containerFacts) ([]specs.Mount, error) {
	mounts := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
		bindMount(f.ShmDir, "/dev/shm", false, "nosuid", "nodev"),
		sysMount(c, f),
		{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
		tmpMount(c.TmpSizeBytes),
		bindMount(f.ResolvConf, "/etc/resolv.conf", false),
		bindMount(f.Hosts, "/etc/hosts", false),
		bindMount(f.HostnameFile, "/etc/hostname", false),
		bindMount(f.Profile, "/etc/profile", true),
	}
	for _, m := range c.Mounts {
		if !path.IsAbs(m.Source) || !path.IsAbs(m.Destination) {
			return nil, fmt.Errorf("mount %s -> %s: source and destination must be absolute paths", m.Source, m.Destination)
		}
		mounts = append(mounts, bindMount(m.Source, path.Clean(m.Destination), m.ReadOnly))
	}
	return mounts, nil
}

// tmpMount is the container's private /tmp, a tmpfs of size bytes (0: the
// kernel's default).
func tmpMount(size int64) specs.Mount {
	opts := []string{"nosuid", "nodev", "mode=1777"}
	if size > 0 {
		opts = append(opts, "size="+strconv.FormatInt(size, 10))
	}
	return specs.Mount{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: opts}
}

// sysMount is /sys: a sysfs of its own, writable for a privileged
// container; in a user namespace without a network namespace of its own,
// which may not mount the host network's sysfs, the host's /sys read-only
// (as rootless runtimes do).
func sysMount(c ContainerSpec, f containerFacts) specs.Mount {
	if f.IDs.mapped && f.NetnsPath == "" {
		return bindMount("/sys", "/sys", true, "nosuid", "noexec", "nodev")
	}
	opts := []string{"nosuid", "noexec", "nodev", "ro"}
	if c.Privileged {
		opts = []string{"nosuid", "noexec", "nodev", "rw"}
	}
	return specs.Mount{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: opts}
}

// bindMount is a recursive, private bind mount; runc creates a missing
// destination as a file when the source is a file, else as a directory.
func bindMount(source, destination string, readOnly bool, extra ...string) specs.Mount {
	opts := append([]string{"rbind", "rprivate"}, extra...)
	if readOnly {
		opts = append(opts, "ro")
	}
	return specs.Mount{Destination: destination, Type: "bind", Source: source, Options: opts}
}

// linuxSection sets the namespaces (the pod's netns by path; new mount, pid,
// ipc and, with a hostname, uts), the cgroup with its limits, the sysctls
// and, for an unprivileged container, the device allow-list and, unless
// /proc is unmasked, the hidden and read-only kernel paths.
func linuxSection(c ContainerSpec, f containerFacts) *specs.Linux {
	ns := []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.MountNamespace}}
	if f.IDs.mapped {
		ns = append(ns, specs.LinuxNamespace{Type: specs.UserNamespace, Path: f.UsernsPath})
	}
	if f.Hostname != "" {
		ns = append(ns, specs.LinuxNamespace{Type: specs.UTSNamespace})
	}
	if f.NetnsPath != "" {
		ns = append(ns, specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: f.NetnsPath})
	}
	l := &specs.Linux{
		Namespaces:  ns,
		CgroupsPath: f.CgroupsPath,
		Resources:   resources(c),
		UIDMappings: f.IDs.mappings(),
		GIDMappings: f.IDs.mappings(),
	}
	if !c.Privileged && !c.UnmaskedProc {
		l.MaskedPaths = slices.Clone(maskedPaths)
		l.ReadonlyPaths = slices.Clone(readonlyPaths)
	}
	if len(c.Sysctls) > 0 {
		l.Sysctl = maps.Clone(c.Sysctls)
	}
	return l
}

// resources is the cgroup section: memory and CFS limits and CPU shares
// when set; devices: everything for a privileged container, else only
// runc's default devices (null, zero, full, tty, random, urandom, pts),
// which runc adds itself.
func resources(c ContainerSpec) *specs.LinuxResources {
	r := &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: c.Privileged, Access: "rwm"}}}
	if c.MemoryLimitBytes > 0 {
		limit := c.MemoryLimitBytes
		r.Memory = &specs.LinuxMemory{Limit: &limit}
	}
	if c.CPUMillis > 0 || c.CPUShares > 0 {
		r.CPU = &specs.LinuxCPU{}
	}
	if c.CPUMillis > 0 {
		// The kernel refuses quotas under 1 ms.
		quota := max(c.CPUMillis*cfsPeriodMicros/1000, 1000)
		period := uint64(cfsPeriodMicros)
		r.CPU.Quota, r.CPU.Period = &quota, &period
	}
	if c.CPUShares > 0 {
		shares := c.CPUShares
		r.CPU.Shares = &shares
	}
	return r
}
