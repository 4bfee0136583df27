package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// viewScript prints what a container sees, one key=value per line.
const viewScript = `
echo "hostname=$(hostname)"
echo "etchostname=$(cat /etc/hostname)"
echo "hosts=$(grep -c . /etc/hosts)"
echo "fqdn=$(grep -F w1.sub.ns.svc.example.org /etc/hosts)"
echo "alias=$(grep -F alias.example /etc/hosts)"
echo "resolv=$(tr '\n' ';' </etc/resolv.conf)"
echo "data=$(cat /data/in.txt)"
echo "file=$(cat /config/app.conf)"
if echo x >/config/app.conf 2>/dev/null; then echo "rofile=writable"; else echo "rofile=refused"; fi
if touch /ro/new 2>/dev/null; then echo "rodir=writable"; else echo "rodir=refused"; fi
echo out >/data/out.txt && echo "rwdir=written"
echo "tmp=$(ls -A /tmp | tr '\n' ' ')"
touch /tmp/from-container
echo "shm=$(df -k --output=size /dev/shm | tail -n1 | tr -d ' ')"
echo "shmshared=$(cat /dev/shm/marker)"
if ulimit -n 65536 2>/dev/null; then echo "ulimit65536=ok"; else echo "ulimit65536=refused"; fi
echo "nofilehard=$(ulimit -Hn)"
echo "pwd=$(pwd)"
echo "uid=$(id -u):$(id -g)"
echo "memlimit=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
echo "cpuquota=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us)"
echo "cpushares=$(cat /sys/fs/cgroup/cpu/cpu.shares)"
echo "pid=$$"
echo "loginpath=$(bash -lc 'echo "$PATH"')"
echo "capnetadmin=$(grep CapEff /proc/self/status | cut -f2)"
if touch /new-in-root 2>/dev/null; then echo "rootfs=writable"; fi
if touch /usr/new-in-usr 2>/dev/null; then echo "usr=writable"; else echo "usr=refused"; fi
if echo 1 >/proc/sys/net/ipv4/ip_forward 2>/dev/null; then echo "procsys=writable"; else echo "procsys=refused"; fi
`

func TestContainerView(t *testing.T) {
	h := newTestHost(t, 3)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{
		UID: "uid-view", Namespace: "ns", Name: "pod-w1", Hostname: "w1", Subdomain: "sub", ClusterDomain: "example.org",
		ShmSizeBytes: 32 << 20, CPUShares: 1536,
		DNS:         DNSConfig{Nameservers: []string{"10.0.0.10"}, Searches: []string{"ns.svc.example.org"}, Options: []string{"ndots:5"}},
		HostAliases: []HostEntry{{IP: "1.2.3.4", Hostnames: []string{"alias.example"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if same, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-view", Namespace: "ns", Name: "pod-w1"}); err != nil || same != s {
		t.Fatalf("second CreateSandbox = %p, %v; want the first sandbox %p", same, err, s)
	}
	data := filepath.Join(s.Dir(), "volumes", "data")
	ro := filepath.Join(s.Dir(), "volumes", "ro")
	conf := filepath.Join(s.Dir(), "volumes", "app.conf")
	for _, d := range []string{data, ro} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Writable by everyone, as the node makes an emptyDir.
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(data, "in.txt"), "volume content")
	writeFile(t, conf, "key: value")
	writeFile(t, filepath.Join(s.Dir(), shmSubdir, "marker"), "pod shm")
	marker := filepath.Join(os.TempDir(), "sandbox-host-tmp-marker")
	writeFile(t, marker, "host")
	t.Cleanup(func() { _ = os.Remove(marker) })

	c, out, stderr := startBash(t, s, "view", viewScript, func(cs *ContainerSpec) {
		cs.Mounts = []Mount{
			{Source: data, Destination: "/data"},
			{Source: ro, Destination: "/ro", ReadOnly: true},
			{Source: conf, Destination: "/config/app.conf", ReadOnly: true},
		}
		cs.WorkingDir = "/work/dir"
		// A home without the host root's own ~/.profile, as in Ray images.
		cs.Env = []string{"PATH=/opt/image/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/home/ray"}
		cs.UID, cs.GID = 0, 0
		cs.MemoryLimitBytes = 256 << 20
		cs.CPUMillis = 500
		cs.CPUShares = 512
		cs.CapDrop = []string{"ALL"}
	})
	if code := waitDone(ctx, t, c, stderr); code != 0 {
		t.Fatalf("exit code %d; stderr: %s", code, stderr)
	}
	got := parseKV(out.String())
	want := map[string]string{
		"hostname":    "w1",
		"etchostname": "w1",
		"hosts":       "10",
		"fqdn":        s.IP().String() + "\tw1.sub.ns.svc.example.org\tw1",
		"alias":       "1.2.3.4\talias.example",
		"resolv":      "nameserver 10.0.0.10;search ns.svc.example.org;options ndots:5;",
		"data":        "volume content",
		"file":        "key: value",
		"rofile":      "refused",
		"rodir":       "refused",
		"rwdir":       "written",
		"tmp":         "",
		"shm":         "32768",
		"shmshared":   "pod shm",
		"ulimit65536": "ok",
		"nofilehard":  "1048576",
		"pwd":         "/work/dir",
		"uid":         "0:0",
		"memlimit":    "268435456",
		"cpuquota":    "50000",
		"cpushares":   "512",
		"pid":         "1",
		"capnetadmin": "0000000000000000",
		"rootfs":      "writable",
		"usr":         "refused",
		"procsys":     "refused",
		// KubeRay's commands run in `bash -lc`: a login shell keeps the
		// container's PATH, as in the images.
		"loginpath": "/opt/image/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	}
	if h.nofile < 65536 {
		// This machine's root lacks CAP_SYS_RESOURCE and has a lower hard
		// limit, which no container can exceed.
		t.Logf("RLIMIT_NOFILE hard limit of this process is %d: containers get that, and `ulimit -n 65536` fails", h.nofile)
		want["ulimit65536"] = "refused"
		want["nofilehard"] = got["nofilehard"]
		if got["nofilehard"] != formatUint(h.nofile) {
			t.Errorf("nofilehard = %s, want %d", got["nofilehard"], h.nofile)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("container view (-want +got):\n%s\nstderr: %s", diff, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(cgroupRoot, "cpu", h.names.podCgroup("uid-view"), "cpu.shares")); err != nil || string(b) != "1536\n" {
		t.Errorf("the pod cgroup's cpu.shares: %q, %v; want 1536", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(data, "out.txt")); err != nil || string(b) != "out\n" {
		t.Errorf("write to the rw volume: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "from-container")); err == nil {
		t.Error("the container's /tmp is the host's")
	}
	if _, err := os.Stat("/usr/new-in-root"); err == nil {
		_ = os.Remove("/usr/new-in-root")
		t.Error("a write to the container's root reached the host's root")
	}
	if _, err := os.Stat(c.dir); err == nil {
		t.Errorf("container directory %s is left after Done", c.dir)
	}
}

func TestExec(t *testing.T) {
	h := newTestHost(t, 4)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-exec", Namespace: "ns", Name: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := startBash(t, s, "main", "echo from-main >/tmp/shared; exec sleep infinity", func(cs *ContainerSpec) {
		cs.Env = append(cs.Env, "FROM_SPEC=spec")
	})
	var stdout, stderr bytes.Buffer
	code, err := c.Exec(ctx, ExecSpec{
		Args:       []string{"bash", "-c", `until [ -s /tmp/shared ]; do sleep 0.05; done; echo "$(cat /tmp/shared) $FROM_SPEC $EXTRA $(pwd) $(hostname)"; echo oops >&2; exit 3`},
		Env:        []string{"EXTRA=extra"},
		WorkingDir: "/usr",
		Stdin:      strings.NewReader(""),
		Stdout:     &stdout,
		Stderr:     &stderr,
	})
	if err != nil || code != 3 {
		t.Fatalf("Exec = %d, %v; want 3; stderr: %s", code, err, stderr.String())
	}
	if got, want := stdout.String(), "from-main spec extra /usr exec\n"; got != want {
		t.Errorf("Exec stdout = %q, want %q", got, want)
	}
	if got := stderr.String(); got != "oops\n" {
		t.Errorf("Exec stderr = %q, want %q", got, "oops\n")
	}
	var in bytes.Buffer
	if code, err := c.Exec(ctx, ExecSpec{Args: []string{"cat"}, Stdin: strings.NewReader("piped"), Stdout: &in}); err != nil || code != 0 || in.String() != "piped" {
		t.Errorf("Exec cat = %d, %v, %q; want 0, \"piped\"", code, err, in.String())
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := c.Exec(short, ExecSpec{Args: []string{"sleep", "100"}}); err == nil {
		t.Error("Exec past its context's deadline returned no error")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func parseKV(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}

func formatUint(v uint64) string { return strconv.FormatUint(v, 10) }

// TestStartFailureLeavesNothing: a container whose command does not exist
// fails to start with runc's error, and nothing of it is left: the same
// attempt then starts, runs and reports its own exit code (not the failed
// one's).
func TestStartFailureLeavesNothing(t *testing.T) {
	h := newTestHost(t, 17)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-fail", Namespace: "ns", Name: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Start(ctx, ContainerSpec{Name: "main", Args: []string{"/no/such/binary"}, Env: testEnv})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Start of a missing binary = %v, want runc's error naming the missing file", err)
	}
	if ids, err := h.runc.list(ctx); err != nil || len(ids) > 0 {
		t.Errorf("runc containers after the failed start: %v (%v)", ids, err)
	}
	c, _, stderr := startBash(t, s, "main", "sleep 0.5; exit 4")
	if code := waitDone(ctx, t, c, stderr); code != 4 {
		t.Errorf("the retried attempt exited %d, want its own 4", code)
	}
}
