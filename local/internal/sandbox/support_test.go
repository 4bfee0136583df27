package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

// requireHost skips a test that needs root (namespaces, a bridge, mounts,
// runc) when not root, and returns the runc binary; as root, a missing runc
// fails the test (hack/node-packages.sh, which make test runs, installs it).
func requireHost(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		capability.Missing(t, "needs root: network namespaces, a bridge, nftables, mounts and runc")
	}
	p, err := exec.LookPath("runc")
	if err != nil {
		t.Fatalf("runc is not installed (hack/node-packages.sh installs it): %v", err)
	}
	return p
}

// testHostConfig is a host config with a state directory, bridge name and
// pod CIDR of its own (k picks 10.250.k.0/24), so that it meets neither
// another test nor the real node on the machine.
func testHostConfig(t testing.TB, k int) HostConfig {
	runc := requireHost(t)
	dir := t.TempDir()
	return HostConfig{
		StateDir:   dir,
		BridgeName: "rsb" + shortHash(dir, 8),
		PodCIDR:    netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 250, byte(k), 0}), 24),
		RuncBinary: runc,
	}
}

// newTestHost starts a host that the test closes, then checks that nothing
// is left.
func newTestHost(t testing.TB, k int) *Host {
	t.Helper()
	cfg := testHostConfig(t, k)
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewHost: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		assertNothingLeft(t, h.cfg)
	})
	return h
}

// assertNothingLeft checks the host has no trace of a host with cfg: no
// netns, mount under StateDir, bridge, veth, nftables table, runc state,
// pod directory, conmon process or cgroup.
func assertNothingLeft(t testing.TB, cfg HostConfig) {
	t.Helper()
	assertMachineClean(t, cfg)
	if _, err := os.Stat(filepath.Join(cfg.StateDir, "runc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runc state %s is left (%v)", filepath.Join(cfg.StateDir, "runc"), err)
	}
	pods, _ := os.ReadDir(filepath.Join(cfg.StateDir, "pods"))
	if len(pods) > 0 {
		t.Errorf("pod directories are left: %v", pods)
	}
}

// assertMachineClean checks the machine has no trace of a host with cfg
// outside its state directory's files: no netns, mount under StateDir or
// the run directory, bridge, veth, nftables table, conmon process or
// cgroup.
func assertMachineClean(t testing.TB, cfg HostConfig) {
	t.Helper()
	n := newNames(cfg.StateDir, cfg.BridgeName)
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), n.netnsNamePrefix()) {
			t.Errorf("netns %s is left", e.Name())
		}
	}
	for _, dir := range []string{cfg.StateDir, n.runDir()} {
		if points, err := mountsUnder(dir); err != nil || len(points) > 0 {
			t.Errorf("mounts under %s are left: %v (%v)", dir, points, err)
		}
	}
	links, err := listLinks()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		name := l.Attrs().Name
		if name == cfg.BridgeName || strings.HasPrefix(name, n.vethPrefix()) {
			t.Errorf("link %s (%s) is left", name, l.Type())
		}
	}
	if exists, err := nftTableExists(n.nftTable()); err != nil || exists {
		t.Errorf("nftables table %s is left (%v)", n.nftTable(), err)
	}
	if exists, err := portGuardExists(n.portGuardTable()); err != nil || exists {
		t.Errorf("nftables table bridge %s is left (%v)", n.portGuardTable(), err)
	}
	if monitors := processesWithArg("--root=" + filepath.Join(cfg.StateDir, "runc")); len(monitors) > 0 {
		t.Errorf("conmon processes of the host are left: %v", monitors)
	}
	roots, err := cgroupRoots()
	if err != nil {
		t.Fatal(err)
	}
	for _, root := range roots {
		if _, err := os.Stat(filepath.Join(root, n.cgroupParent())); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s is left (%v)", filepath.Join(root, n.cgroupParent()), err)
		}
	}
}

// output is a concurrency-safe writer that can wait for text to appear.
type output struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
	// followed closes when a followed log has been read to its end.
	followed chan struct{}
}

func newOutput() *output { return &output{changed: make(chan struct{}), followed: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	close(o.changed)
	o.changed = make(chan struct{})
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits until the text contains s.
func (o *output) waitFor(ctx context.Context, s string) error {
	for {
		o.mu.Lock()
		found, changed := strings.Contains(o.buf.String(), s), o.changed
		o.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %q in %q: %w", s, o.String(), ctx.Err())
		}
	}
}

// testEnv is what a container started by a test gets.
var testEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}

// startBash starts `bash -c script` in s and returns its stdout and stderr.
func startBash(t testing.TB, s *Sandbox, name, script string, mutate ...func(*ContainerSpec)) (*Container, *output, *output) {
	t.Helper()
	stdout, stderr := newOutput(), newOutput()
	spec := ContainerSpec{Name: name, Args: []string{"bash", "-c", script}, Env: testEnv}
	for _, m := range mutate {
		m(&spec)
	}
	if spec.LogPath == "" {
		spec.LogPath = filepath.Join(t.TempDir(), name+".log")
	}
	c, err := s.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("Start %s: %v", name, err)
	}
	followLog(t, spec.LogPath, c.Done(), map[string]*output{"stdout": stdout, "stderr": stderr})
	return c, stdout, stderr
}

// followLog copies the content of a container's CRI log, as conmon writes
// it, to the output of each stream until done closes and the file is read
// to its end, or the test ends.
func followLog(t testing.TB, path string, done <-chan struct{}, outs map[string]*output) {
	t.Helper()
	stop, stopped := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop); <-stopped })
	go func() {
		defer close(stopped)
		defer func() {
			for _, o := range outs {
				close(o.followed)
			}
		}()
		var offset int64
		var pending []byte
		for {
			ended := false
			select {
			case <-done:
				ended = true
			case <-stop:
				ended = true
			case <-time.After(20 * time.Millisecond):
			}
			data, _ := os.ReadFile(path)
			if int64(len(data)) > offset {
				pending = append(pending, data[offset:]...)
				offset = int64(len(data))
			}
			pending = writeLogLines(pending, outs)
			if ended {
				return
			}
		}
	}()
}

// writeLogLines writes the complete CRI lines of buf ("<time> <stream>
// <P|F> <content>") to their streams' outputs and returns the rest.
func writeLogLines(buf []byte, outs map[string]*output) []byte {
	for {
		line, rest, ok := bytes.Cut(buf, []byte("\n"))
		if !ok {
			return buf
		}
		buf = rest
		parts := strings.SplitN(string(line), " ", 4)
		if len(parts) < 3 || outs[parts[1]] == nil {
			continue
		}
		content := ""
		if len(parts) == 4 {
			content = parts[3]
		}
		if parts[2] == "F" {
			content += "\n"
		}
		_, _ = outs[parts[1]].Write([]byte(content))
	}
}

// waitDone waits for the container to end and its log (of which out is a
// stream) to be read, and returns its exit code.
func waitDone(ctx context.Context, t testing.TB, c *Container, out *output) int {
	t.Helper()
	select {
	case <-out.followed:
		return c.ExitCode()
	case <-ctx.Done():
		t.Fatalf("container %s did not end: %v; output: %s", c.ID(), ctx.Err(), out)
		return -1
	}
}

// testContext is a context that ends before the test's deadline.
func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// processesWithArg lists the pids of the processes one of whose arguments
// is arg.
func processesWithArg(arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if slices.Contains(strings.Split(string(cmdline), "\x00"), arg) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
