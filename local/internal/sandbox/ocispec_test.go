package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func testFacts() containerFacts {
	return containerFacts{
		RootfsPath:   "/state/pods/u/containers/c/rootfs",
		Hostname:     "head-0",
		NetnsPath:    "/run/netns/rayop-abcde-12345678",
		ShmDir:       "/state/pods/u/shm",
		ResolvConf:   "/state/pods/u/etc/resolv.conf",
		Hosts:        "/state/pods/u/etc/hosts",
		HostnameFile: "/state/pods/u/etc/hostname",
		Profile:      "/state/pods/u/etc/profile",
		CgroupsPath:  "/rayop-abcde/12345678-ray-head-0",
		NofileLimit:  1048576,
	}
}

func testContainer() ContainerSpec {
	return ContainerSpec{
		Name: "ray-head",
		Args: []string{"/bin/bash", "-c", "ray start --head --block"},
		Env:  []string{"PATH=/usr/bin:/bin", "HOME=/root"},
	}
}

// wantSpec is the spec of testContainer in testFacts.
func wantSpec() *specs.Spec {
	defaultCaps := []string{
		"CAP_AUDIT_WRITE", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_MKNOD",
		"CAP_NET_BIND_SERVICE", "CAP_NET_RAW", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID", "CAP_SYS_CHROOT",
	}
	bind := func(src, dst string, extra ...string) specs.Mount {
		return specs.Mount{Destination: dst, Type: "bind", Source: src, Options: append([]string{"rbind", "rprivate"}, extra...)}
	}
	return &specs.Spec{
		Version:  specs.Version,
		Root:     &specs.Root{Path: "/state/pods/u/containers/c/rootfs"},
		Hostname: "head-0",
		Process: &specs.Process{
			Args:         []string{"/bin/bash", "-c", "ray start --head --block"},
			Env:          []string{"PATH=/usr/bin:/bin", "HOME=/root"},
			Cwd:          "/",
			Capabilities: &specs.LinuxCapabilities{Bounding: defaultCaps, Effective: defaultCaps, Permitted: defaultCaps},
			Rlimits:      []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1048576, Soft: 1048576}},
		},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
			bind("/state/pods/u/shm", "/dev/shm", "nosuid", "nodev"),
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}},
			bind("/state/pods/u/etc/resolv.conf", "/etc/resolv.conf"),
			bind("/state/pods/u/etc/hosts", "/etc/hosts"),
			bind("/state/pods/u/etc/hostname", "/etc/hostname"),
			bind("/state/pods/u/etc/profile", "/etc/profile", "ro"),
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.MountNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.NetworkNamespace, Path: "/run/netns/rayop-abcde-12345678"},
			},
			CgroupsPath:   "/rayop-abcde/12345678-ray-head-0",
			Resources:     &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}}},
			MaskedPaths:   maskedPaths,
			ReadonlyPaths: readonlyPaths,
		},
	}
}

func TestRuntimeSpec(t *testing.T) {
	tests := map[string]struct {
		container func(*ContainerSpec)
		facts     func(*containerFacts)
		want      func(*specs.Spec)
	}{
		"defaults": {},
		"user, working dir and rlimit from the host": {
			container: func(c *ContainerSpec) { c.UID, c.GID, c.WorkingDir = 1000, 100, "/home/ray" },
			facts:     func(f *containerFacts) { f.NofileLimit = 20000 },
			want: func(s *specs.Spec) {
				s.Process.User = specs.User{UID: 1000, GID: 100}
				s.Process.Cwd = "/home/ray"
				s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 20000, Soft: 20000}}
			},
		},
		"a terminal, with TERM unless the container sets it": {
			container: func(c *ContainerSpec) { c.TTY = true },
			want: func(s *specs.Spec) {
				s.Process.Terminal = true
				s.Process.Env = append(s.Process.Env, "TERM=xterm")
			},
		},
		"a terminal with the container's TERM": {
			container: func(c *ContainerSpec) { c.TTY, c.Env = true, append(c.Env, "TERM=dumb") },
			want: func(s *specs.Spec) {
				s.Process.Terminal = true
				s.Process.Env = append(s.Process.Env, "TERM=dumb")
			},
		},
		"caller mounts in order, read-only and cleaned": {
			container: func(c *ContainerSpec) {
				c.Mounts = []Mount{
					{Source: "/state/pods/u/volumes/data", Destination: "/data/"},
					{Source: "/state/pods/u/volumes/cfg/app.yaml", Destination: "/etc/app.yaml", ReadOnly: true},
				}
			},
			want: func(s *specs.Spec) {
				s.Mounts = append(s.Mounts,
					specs.Mount{Destination: "/data", Type: "bind", Source: "/state/pods/u/volumes/data", Options: []string{"rbind", "rprivate"}},
					specs.Mount{Destination: "/etc/app.yaml", Type: "bind", Source: "/state/pods/u/volumes/cfg/app.yaml", Options: []string{"rbind", "rprivate", "ro"}},
				)
			},
		},
		"capabilities added and dropped by Kubernetes names": {
			container: func(c *ContainerSpec) {
				c.CapAdd = []string{"NET_ADMIN", "CAP_SYS_PTRACE"}
				c.CapDrop = []string{"MKNOD", "net_raw", "SETPCAP", "SETFCAP", "AUDIT_WRITE", "KILL", "SYS_CHROOT", "NET_BIND_SERVICE"}
			},
			want: func(s *specs.Spec) {
				caps := []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_NET_ADMIN", "CAP_SETGID", "CAP_SETUID", "CAP_SYS_PTRACE"}
				s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}
			},
		},
		"drop ALL keeps only the added ones": {
			container: func(c *ContainerSpec) { c.CapAdd, c.CapDrop = []string{"NET_BIND_SERVICE"}, []string{"ALL"} },
			want: func(s *specs.Spec) {
				caps := []string{"CAP_NET_BIND_SERVICE"}
				s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}
			},
		},
		"drop ALL with nothing added leaves nothing": {
			container: func(c *ContainerSpec) { c.CapDrop = []string{"all"} },
			want: func(s *specs.Spec) {
				s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: []string{}, Effective: []string{}, Permitted: []string{}}
			},
		},
		"add ALL less a dropped one; an added and dropped one stays": {
			container: func(c *ContainerSpec) { c.CapAdd, c.CapDrop = []string{"ALL", "KILL"}, []string{"SYS_ADMIN", "KILL"} },
			want: func(s *specs.Spec) {
				caps := []string{}
				for _, c := range sortedCopy(allCapabilities) {
					if c != "SYS_ADMIN" {
						caps = append(caps, "CAP_"+c)
					}
				}
				s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}
			},
		},
		"read-only root, no_new_privs, supplementary groups, sysctls": {
			container: func(c *ContainerSpec) {
				c.ReadOnlyRoot, c.NoNewPrivileges = true, true
				c.AdditionalGIDs = []uint32{2000, 3000}
				c.Sysctls = map[string]string{"net.ipv4.ip_local_port_range": "20000 30000"}
			},
			want: func(s *specs.Spec) {
				s.Root.Readonly = true
				s.Process.NoNewPrivileges = true
				s.Process.User.AdditionalGids = []uint32{2000, 3000}
				s.Linux.Sysctl = map[string]string{"net.ipv4.ip_local_port_range": "20000 30000"}
			},
		},
		"unmasked /proc: nothing hidden or read-only": {
			container: func(c *ContainerSpec) { c.UnmaskedProc = true },
			want:      func(s *specs.Spec) { s.Linux.MaskedPaths, s.Linux.ReadonlyPaths = nil, nil },
		},
		"a Localhost seccomp profile as loaded": {
			container: func(c *ContainerSpec) {
				c.Seccomp = Seccomp{Type: SeccompLocalhost, Profile: &specs.LinuxSeccomp{DefaultAction: specs.ActErrno}}
			},
			want: func(s *specs.Spec) { s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActErrno} },
		},
		"privileged: every capability and device, writable /sys, nothing masked": {
			container: func(c *ContainerSpec) { c.Privileged = true; c.CapDrop = []string{"ALL"} },
			want: func(s *specs.Spec) {
				caps := make([]string, 0, len(allCapabilities))
				for _, c := range sortedCopy(allCapabilities) {
					caps = append(caps, "CAP_"+c)
				}
				s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}
				s.Mounts[5].Options = []string{"nosuid", "noexec", "nodev", "rw"}
				s.Linux.Resources.Devices = []specs.LinuxDeviceCgroup{{Allow: true, Access: "rwm"}}
				s.Linux.MaskedPaths, s.Linux.ReadonlyPaths = nil, nil
			},
		},
		"memory and CPU limits": {
			container: func(c *ContainerSpec) { c.MemoryLimitBytes, c.CPUMillis = 2<<30, 1500 },
			want: func(s *specs.Spec) {
				limit, quota, period := int64(2<<30), int64(150000), uint64(100000)
				s.Linux.Resources.Memory = &specs.LinuxMemory{Limit: &limit}
				s.Linux.Resources.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
			},
		},
		"a tiny CPU limit is raised to the kernel's minimum quota": {
			container: func(c *ContainerSpec) { c.CPUMillis = 1 },
			want: func(s *specs.Spec) {
				quota, period := int64(1000), uint64(100000)
				s.Linux.Resources.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
			},
		},
		"host network: no netns and no UTS namespace": {
			facts: func(f *containerFacts) { f.NetnsPath, f.Hostname = "", "" },
			want: func(s *specs.Spec) {
				s.Hostname = ""
				s.Linux.Namespaces = []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.MountNamespace}}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, f, want := testContainer(), testFacts(), wantSpec()
			if tc.container != nil {
				tc.container(&c)
			}
			if tc.facts != nil {
				tc.facts(&f)
			}
			if tc.want != nil {
				tc.want(want)
			}
			got, err := runtimeSpec(c, f)
			if err != nil {
				t.Fatalf("runtimeSpec: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("runtimeSpec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRuntimeSpecRejects(t *testing.T) {
	tests := map[string]func(*ContainerSpec){
		"no command":                          func(c *ContainerSpec) { c.Args = nil },
		"unknown capability":                  func(c *ContainerSpec) { c.CapAdd = []string{"NET_WIZARDRY"} },
		"relative mount path":                 func(c *ContainerSpec) { c.Mounts = []Mount{{Source: "data", Destination: "/data"}} },
		"Localhost seccomp without a profile": func(c *ContainerSpec) { c.Seccomp = Seccomp{Type: SeccompLocalhost} },
		"unknown seccomp type":                func(c *ContainerSpec) { c.Seccomp = Seccomp{Type: "Strict"} },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			c := testContainer()
			mutate(&c)
			if _, err := runtimeSpec(c, testFacts()); err == nil {
				t.Error("runtimeSpec succeeded, want an error")
			}
		})
	}
}
