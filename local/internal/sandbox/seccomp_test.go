package sandbox

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// refusals maps each system call the filter refuses without conditions on
// its arguments to its errno, and lists the calls refused only for some
// arguments.
func refusals(p *specs.LinuxSeccomp) (map[string]uint, []string) {
	plain := map[string]uint{}
	var conditional []string
	for _, r := range p.Syscalls {
		for _, name := range r.Names {
			switch {
			case r.Action != specs.ActErrno:
				continue
			case len(r.Args) > 0:
				if !slices.Contains(conditional, name) {
					conditional = append(conditional, name)
				}
			default:
				plain[name] = *r.ErrnoRet
			}
		}
	}
	slices.Sort(conditional)
	return plain, conditional
}

func TestDefaultSeccomp(t *testing.T) {
	tests := map[string]struct {
		caps              []string
		refused, allowed  []string
		conditional       []string
		clone3Errno       uint
		wantClone3Refused bool
	}{
		"the default capabilities": {
			caps:              defaultCapabilities,
			refused:           []string{"mount", "unshare", "setns", "keyctl", "kexec_load", "init_module", "bpf", "io_uring_setup", "reboot", "clock_settime", "userfaultfd", "open_by_handle_at"},
			allowed:           []string{"read", "clone", "ptrace", "process_vm_readv", "chroot", "personality", "socket"},
			conditional:       []string{"clone", "socket"},
			wantClone3Refused: true,
		},
		"CAP_SYS_ADMIN lifts mounts and namespaces": {
			caps:        append(slices.Clone(defaultCapabilities), "SYS_ADMIN"),
			refused:     []string{"keyctl", "init_module", "reboot"},
			allowed:     []string{"mount", "unshare", "setns", "bpf", "perf_event_open", "syslog", "clone3"},
			conditional: []string{"socket"},
		},
		"CAP_BPF lifts bpf only": {
			caps:              []string{"BPF"},
			refused:           []string{"mount", "perf_event_open"},
			allowed:           []string{"bpf"},
			conditional:       []string{"clone", "socket"},
			wantClone3Refused: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := defaultSeccomp(tc.caps)
			if p.DefaultAction != specs.ActAllow || len(p.Architectures) == 0 {
				t.Errorf("defaultAction %s, architectures %v; want SCMP_ACT_ALLOW and the machine's", p.DefaultAction, p.Architectures)
			}
			plain, conditional := refusals(p)
			for _, call := range tc.refused {
				if plain[call] != errnoEPERM {
					t.Errorf("%s: errno %d, want EPERM", call, plain[call])
				}
			}
			for _, call := range tc.allowed {
				if _, ok := plain[call]; ok {
					t.Errorf("%s is refused, want it allowed", call)
				}
			}
			if got := plain["clone3"]; tc.wantClone3Refused != (got == errnoENOSYS) {
				t.Errorf("clone3 errno %d, want refused with ENOSYS: %v", got, tc.wantClone3Refused)
			}
			if diff := cmp.Diff(tc.conditional, conditional); diff != "" {
				t.Errorf("calls refused for some arguments (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSeccompProfile(t *testing.T) {
	got, err := ParseSeccompProfile([]byte(`{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["read"],"action":"SCMP_ACT_ALLOW"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{{Names: []string{"read"}, Action: specs.ActAllow}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"syscalls":[]}`, `not json`} {
		if _, err := ParseSeccompProfile([]byte(bad)); err == nil {
			t.Errorf("ParseSeccompProfile(%s) succeeded, want an error", bad)
		}
	}
}

// TestContainerSecurity runs a container with every hardening setting and
// one without, and checks what each sees.
func TestContainerSecurity(t *testing.T) {
	h := newTestHost(t, 24)
	ctx := testContext(t, time.Minute)
	const script = `
echo "groups=$(id -G)"
echo "nonewprivs=$(awk '/^NoNewPrivs:/{print $2}' /proc/self/status)"
echo "seccomp=$(awk '/^Seccomp:/{print $2}' /proc/self/status)"
if touch /var/tmp/written 2>/dev/null; then echo "root=writable"; else echo "root=read-only"; fi
if touch /tmp/written 2>/dev/null; then echo "tmp=writable"; else echo "tmp=read-only"; fi
if unshare -U true 2>/dev/null; then echo "userns=allowed"; else echo "userns=denied"; fi
echo "keys=$(grep -c ' /proc/keys ' /proc/self/mountinfo)"
echo "portrange=$(tr '\t' ' ' </proc/sys/net/ipv4/ip_local_port_range)"
`
	tests := map[string]struct {
		spec func(*ContainerSpec)
		want map[string]string
	}{
		"hardened": {
			spec: func(c *ContainerSpec) {
				c.AdditionalGIDs = []uint32{2000, 3000}
				c.ReadOnlyRoot, c.NoNewPrivileges = true, true
				c.Seccomp = Seccomp{Type: SeccompRuntimeDefault}
				c.Sysctls = map[string]string{"net.ipv4.ip_local_port_range": "20000 30000"}
			},
			want: map[string]string{
				"groups": "0 2000 3000", "nonewprivs": "1", "seccomp": "2", "root": "read-only", "tmp": "writable",
				"userns": "denied", "keys": "1", "portrange": "20000 30000",
			},
		},
		"defaults": {
			spec: func(c *ContainerSpec) { c.UnmaskedProc = true },
			want: map[string]string{
				"groups": "0", "nonewprivs": "0", "seccomp": "0", "root": "writable", "tmp": "writable",
				"userns": "allowed", "keys": "0", "portrange": "32768 60999",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// A pod each: the network sysctl is the pod's.
			s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-" + name, Namespace: "ns", Name: name})
			if err != nil {
				t.Fatal(err)
			}
			c, out, stderr := startBash(t, s, name, script, tc.spec)
			if code := waitDone(ctx, t, c, stderr); code != 0 {
				t.Fatalf("exit code %d; stderr: %s", code, stderr)
			}
			if diff := cmp.Diff(tc.want, parseKV(out.String())); diff != "" {
				t.Errorf("what the container sees (-want +got):\n%s\nstderr: %s", diff, stderr)
			}
		})
	}
}
