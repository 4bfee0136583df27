package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// isolationScript prints, as root in the container, what it sees of the
// host's private places and whether writes reach the host, then sleeps. $1
// is the state directory, $2 the test's working directory (inside the
// repository), $3 a file the test made on the host, $4 a path on the host's
// / the container tries to create.
const isolationScript = `
echo "id=$(id -u):$(id -g)"
echo "uidmap=$(awk '{print $1" "$3}' /proc/self/uid_map)"
echo "root=$(ls -A /root | tr '\n' ' ')"
echo "home=$(ls -A /home | tr '\n' ' ')"
echo "var=$(ls -A /var | tr '\n' ' ')"
for p in /etc/shadow /etc/gshadow /etc/ssh /etc/sudoers /etc/ssl/private "$1" "$2" "$3"; do
	if [ -e "$p" ]; then echo "visible=$p"; fi
done
echo "passwd=$(cut -d: -f1 /etc/passwd | tr '\n' ' ')"
touch "$4" 2>/dev/null
echo "certs=$(test -s /etc/ssl/certs/ca-certificates.crt && echo yes)"
echo "python=$(python3 -c 'print(7*6)')"
echo "done=yes"
exec sleep 60
`

// TestContainerSeesNothingPrivate runs a container as root and checks that
// the host's private files, the state directory and the repository are
// absent, that a write to / stays in the container's layer, and that root
// in the container is an unprivileged user on the host.
func TestContainerSeesNothingPrivate(t *testing.T) {
	h := newTestHost(t, 7)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-iso", Namespace: "ns", Name: "iso"})
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	hostFile := filepath.Join(t.TempDir(), "host-file")
	writeFile(t, hostFile, "host")
	escape := "/sandbox-escape-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { _ = os.Remove(escape) })
	c, out, stderr := startBash(t, s, "iso", isolationScript, func(cs *ContainerSpec) {
		cs.Args = append(cs.Args, "isolation", h.cfg.StateDir, wd, hostFile, escape)
	})
	if err := out.waitFor(ctx, "done=yes"); err != nil {
		t.Fatalf("%v; stderr: %s", err, stderr)
	}
	hostUID := containerHostUID(t, c)
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	waitDone(ctx, t, c, stderr)
	got := parseKV(out.String())
	delete(got, "done")
	want := map[string]string{
		"id":     "0:0",
		"uidmap": "0 65536",
		"root":   "",
		"home":   "ray ",
		"var":    "cache lib log tmp ",
		"passwd": "root daemon bin sys nobody ray ",
		"certs":  "yes",
		"python": "42",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the container sees (-want +got):\n%s\nstderr: %s", diff, stderr)
	}
	if _, err := os.Stat(escape); err == nil {
		t.Errorf("the container created %s on the host", escape)
	}
	if hostUID < userNSBase {
		t.Errorf("the container's root runs as host uid %d, want an unprivileged one (>= %d)", hostUID, userNSBase)
	}
}

// containerHostUID returns the host uid the running container's first
// process runs as.
func containerHostUID(t *testing.T, c *Container) int {
	t.Helper()
	pid, err := os.ReadFile(filepath.Join(c.dir, "pid"))
	if err != nil {
		t.Fatalf("the container's pid: %v", err)
	}
	status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/status")
	if err != nil {
		t.Fatalf("status of the container's process: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return uid
		}
	}
	t.Fatal("no Uid line in the process status")
	return -1
}
