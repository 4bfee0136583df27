package sandbox

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// verdict is what filter p does to a system call with arguments args: ""
// when it lets the call through, else the errno the call fails with. It
// reads the filter as the kernel runs runc's translation of it: a call
// matching an allowing rule (every argument condition true) goes through; one
// matching an errno rule fails with that rule's errno; any other gets the
// default action.
func verdict(t *testing.T, p *specs.LinuxSeccomp, call string, args ...uint64) string {
	t.Helper()
	errno := ""
	for _, r := range p.Syscalls {
		if !slices.Contains(r.Names, call) || !argsMatch(t, r.Args, args) {
			continue
		}
		switch r.Action {
		case specs.ActAllow:
			return ""
		case specs.ActErrno:
			errno = errnoName(r.ErrnoRet)
		default:
			t.Fatalf("%s: unexpected action %s", call, r.Action)
		}
	}
	if errno != "" {
		return errno
	}
	if p.DefaultAction == specs.ActAllow {
		return ""
	}
	return errnoName(p.DefaultErrnoRet)
}

// argsMatch says whether every condition of a rule holds for args.
func argsMatch(t *testing.T, conds []specs.LinuxSeccompArg, args []uint64) bool {
	t.Helper()
	for _, c := range conds {
		var v uint64
		if int(c.Index) < len(args) {
			v = args[c.Index]
		}
		var ok bool
		switch c.Op {
		case specs.OpEqualTo:
			ok = v == c.Value
		case specs.OpLessThan:
			ok = v < c.Value
		case specs.OpMaskedEqual:
			ok = v&c.Value == c.ValueTwo
		default:
			t.Fatalf("unexpected seccomp operator %s", c.Op)
		}
		if !ok {
			return false
		}
	}
	return true
}

// errnoName names an errno action's return value; runc's default is EPERM.
func errnoName(ret *uint) string {
	if ret == nil {
		return "EPERM"
	}
	return unix.ErrnoName(unix.Errno(*ret))
}

// Arguments of the calls the tests make.
const (
	afInet          = 2
	afVsock         = 40
	addrNoRandomize = 0x0040000
	personalityGet  = 0xffffffff
)

// seccompCall is one system call with its arguments and the verdict wanted.
type seccompCall struct {
	name string
	args []uint64
	want string
}

// Calls every RuntimeDefault filter treats alike, whatever the capabilities.
var (
	seccompAlwaysAllowed = []seccompCall{
		{name: "read"}, {name: "openat"}, {name: "clone", args: []uint64{uint64(unix.SIGCHLD)}},
		{name: "socket", args: []uint64{afInet}}, {name: "personality", args: []uint64{personalityGet}},
		{name: "personality", args: []uint64{0}}, {name: "ptrace"},
	}
	seccompAlwaysRefused = []seccompCall{
		{name: "keyctl", want: "EPERM"}, {name: "add_key", want: "EPERM"}, {name: "request_key", want: "EPERM"},
		{name: "kexec_load", want: "EPERM"}, {name: "io_uring_setup", want: "EPERM"},
		{name: "socket", args: []uint64{afVsock}, want: "EPERM"},
		// Outside the allow list, so refused though no deny list names them.
		{name: "personality", args: []uint64{addrNoRandomize}, want: "EPERM"},
		{name: "userfaultfd", want: "EPERM"}, {name: "not_a_system_call", want: "EPERM"},
	}
)

func TestDefaultSeccomp(t *testing.T) {
	withDefaults := func(extra ...string) []string { return append(slices.Clone(defaultCapabilities), extra...) }
	tests := map[string]struct {
		caps  []string
		calls []seccompCall
	}{
		"the default capabilities": {
			caps: withDefaults(),
			calls: []seccompCall{
				{name: "unshare", want: "EPERM"}, {name: "mount", want: "EPERM"}, {name: "setns", want: "EPERM"},
				{name: "clone", args: []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, want: "EPERM"},
				{name: "clone3", want: "ENOSYS"}, {name: "bpf", want: "EPERM"}, {name: "reboot", want: "EPERM"},
				{name: "process_madvise", want: "EPERM"}, {name: "mbind", want: "EPERM"},
				// CAP_SYS_CHROOT is among the defaults.
				{name: "chroot"},
			},
		},
		"CAP_SYS_ADMIN lifts mounts and namespaces": {
			caps: withDefaults("SYS_ADMIN"),
			calls: []seccompCall{
				{name: "unshare"}, {name: "mount"}, {name: "setns"}, {name: "clone3"},
				{name: "clone", args: []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}},
				{name: "init_module", want: "EPERM"}, {name: "reboot", want: "EPERM"},
			},
		},
		"CAP_SYS_PTRACE and CAP_SYS_NICE lift their calls": {
			caps:  withDefaults("SYS_PTRACE", "SYS_NICE"),
			calls: []seccompCall{{name: "process_madvise"}, {name: "kcmp"}, {name: "mbind"}, {name: "unshare", want: "EPERM"}},
		},
		"no capabilities": {
			calls: []seccompCall{{name: "chroot", want: "EPERM"}, {name: "unshare", want: "EPERM"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			caps := make([]string, len(tc.caps))
			for i, c := range tc.caps {
				caps[i] = "CAP_" + c
			}
			p, err := defaultSeccomp(caps)
			if err != nil {
				t.Fatal(err)
			}
			if p.DefaultAction != specs.ActErrno || len(p.Architectures) == 0 {
				t.Errorf("defaultAction %s, architectures %v; want an allow list over the machine's architectures", p.DefaultAction, p.Architectures)
			}
			for _, c := range slices.Concat(tc.calls, seccompAlwaysAllowed, seccompAlwaysRefused) {
				if got := verdict(t, p, c.name, c.args...); got != c.want {
					t.Errorf("%s%v: %q, want %q (empty: allowed)", c.name, c.args, got, c.want)
				}
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

// eperm is how the C library words EPERM, what a seccomp filter's refusal
// returns.
const eperm = "Operation not permitted"

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
if out=$(unshare -U true 2>&1); then echo "userns=allowed"; else echo "userns=${out##*: }"; fi
if out=$(setarch "$(uname -m)" -R true 2>&1); then echo "personality=allowed"; else echo "personality=${out##*: }"; fi
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
				"userns": eperm, "personality": eperm, "keys": "1", "portrange": "20000 30000",
			},
		},
		"defaults": {
			spec: func(c *ContainerSpec) { c.UnmaskedProc = true },
			want: map[string]string{
				"groups": "0", "nonewprivs": "0", "seccomp": "0", "root": "writable", "tmp": "writable",
				"userns": "allowed", "personality": "allowed", "keys": "0", "portrange": "32768 60999",
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
