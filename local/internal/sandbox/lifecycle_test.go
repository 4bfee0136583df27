package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

func TestDestroyReleasesEverythingOfThePod(t *testing.T) {
	h := newTestHost(t, 5)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-destroy", Namespace: "ns", Name: "d"})
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := startBash(t, s, "main", "exec sleep infinity")
	ip, dir := s.IP(), s.Dir()
	if err := s.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Destroy(ctx); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	select {
	case <-c.Done():
		if c.ExitCode() != 137 {
			t.Errorf("ExitCode of a container of a destroyed pod = %d, want 137", c.ExitCode())
		}
	default:
		t.Error("Destroy returned before its container was done")
	}
	if _, ok := h.Sandbox("uid-destroy"); ok {
		t.Error("Sandbox still finds the destroyed pod")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod directory: %v, want it gone", err)
	}
	if _, err := os.Stat(filepath.Join(netnsDir, h.names.netns("uid-destroy"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod netns: %v, want it gone", err)
	}
	var notFound netlink.LinkNotFoundError
	if _, err := netlink.LinkByName(h.names.veth("uid-destroy")); !errors.As(err, &notFound) {
		t.Errorf("pod veth: %v, want it gone", err)
	}
	// The pool hands out a released address only after every other one.
	h.mu.Lock()
	inUse := h.pool.inUse[ip]
	h.mu.Unlock()
	if inUse {
		t.Errorf("address %s is still in use", ip)
	}
	if _, err := s.Start(ctx, ContainerSpec{Name: "late", Args: []string{"true"}, Env: testEnv}); err == nil {
		t.Error("Start in a destroyed sandbox succeeded")
	}
}

func TestHostNetworkSandbox(t *testing.T) {
	h := newTestHost(t, 6)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-hostnet", Namespace: "ns", Name: "hn", HostNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.IP() != h.Gateway() {
		t.Errorf("IP = %s, want the gateway %s", s.IP(), h.Gateway())
	}
	c, out, stderr := startBash(t, s, "main", "cat /sys/class/net/"+h.cfg.BridgeName+"/operstate >/dev/null && echo sees-bridge; hostname")
	if code := waitDone(ctx, t, c, stderr); code != 0 {
		t.Fatalf("exit %d; stderr: %s", code, stderr)
	}
	hostname, _ := os.Hostname()
	if want := "sees-bridge\n" + hostname + "\n"; out.String() != want {
		t.Errorf("output %q, want %q", out, want)
	}
}

func TestCloseLeavesNothing(t *testing.T) {
	cfg := testHostConfig(t, 7)
	before, err := readSysctls(hostSysctls)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t, time.Minute)
	h, err := NewHost(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var containers []*Container
	for i, hostNet := range []bool{false, false, true} {
		s, err := h.CreateSandbox(ctx, SandboxSpec{UID: fmt.Sprintf("uid-%d", i), Namespace: "ns", Name: fmt.Sprintf("p%d", i), HostNetwork: hostNet})
		if err != nil {
			t.Fatal(err)
		}
		c, _, _ := startBash(t, s, "main", "exec sleep infinity")
		containers = append(containers, c)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, c := range containers {
		select {
		case <-c.Done():
		default:
			t.Errorf("container %s still runs after Close", c.ID())
		}
	}
	assertNothingLeft(t, h.cfg)
	after, err := readSysctls(hostSysctls)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("sysctls after Close = %v, want them restored to %v", after, before)
	}
	if _, err := h.CreateSandbox(ctx, SandboxSpec{UID: "late", Name: "late"}); err == nil {
		t.Error("CreateSandbox on a closed host succeeded")
	}
}

// Environment of the crashing helper process.
const (
	crashStateEnv  = "SANDBOX_TEST_CRASH_STATE_DIR"
	crashBridgeEnv = "SANDBOX_TEST_CRASH_BRIDGE"
	crashPodCIDR   = "10.250.8.0/24"
)

// TestCrashHelper is run by TestCrashedHostIsSwept in a child process: it
// makes a host with sandboxes and running containers, reports the
// containers' PIDs and waits to be killed.
func TestCrashHelper(t *testing.T) {
	stateDir := os.Getenv(crashStateEnv)
	if stateDir == "" {
		t.Skip("helper process of TestCrashedHostIsSwept")
	}
	cfg := HostConfig{
		StateDir: stateDir, BridgeName: os.Getenv(crashBridgeEnv), PodCIDR: netip.MustParsePrefix(crashPodCIDR),
		RuncBinary: requireHost(t),
	}
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		s, err := h.CreateSandbox(context.Background(), SandboxSpec{UID: fmt.Sprintf("crash-%d", i), Namespace: "ns", Name: "c"})
		if err != nil {
			t.Fatal(err)
		}
		// The log goes to the parent's directory: a killed process's own
		// temporary directories stay.
		logPath := func(spec *ContainerSpec) { spec.LogPath = filepath.Join(stateDir, fmt.Sprintf("main-%d.log", i)) }
		_, out, _ := startBash(t, s, "main", "echo pid=$$; exec sleep infinity", logPath)
		if err := out.waitFor(context.Background(), "pid="); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("READY")
	select {}
}

func TestCrashedHostIsSwept(t *testing.T) {
	cfg := testHostConfig(t, 8)
	if cfg.PodCIDR.String() != crashPodCIDR {
		t.Fatalf("pod CIDR %s, want the helper's %s", cfg.PodCIDR, crashPodCIDR)
	}
	before, err := readSysctls(hostSysctls)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t, 2*time.Minute)
	claimHost(t, cfg)
	child, stdout := startHelper(ctx, t, "TestCrashHelper", crashStateEnv+"="+cfg.StateDir, crashBridgeEnv+"="+cfg.BridgeName)
	if err := waitForLine(stdout, "READY"); err != nil {
		_ = child.Process.Kill()
		t.Fatalf("helper: %v", err)
	}
	names := newNames(cfg.StateDir, cfg.BridgeName)
	pids := cgroupPIDs(t, names.cgroupParent())
	if len(pids) < 2 {
		t.Fatalf("processes in the crashed host's cgroups = %v, want at least the two containers", pids)
	}
	// The crash: SIGKILL, no cleanup. Each container's conmon is no child
	// of the host's process, so the containers run on.
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	for _, pid := range pids {
		if !alive(pid) {
			t.Errorf("container process %d ended with the process that started it", pid)
		}
	}
	if points, _ := mountsUnder(cfg.StateDir); len(points) == 0 {
		t.Fatal("the crashed host left no mounts: the test would prove nothing")
	}

	h, err := NewHost(ctx, cfg)
	if err != nil {
		t.Fatalf("NewHost after a crash: %v", err)
	}
	if points, _ := mountsUnder(cfg.StateDir); len(points) > 0 {
		t.Errorf("mounts left after the sweep: %v", points)
	}
	if entries, _ := os.ReadDir(filepath.Join(cfg.StateDir, "pods")); len(entries) > 0 {
		t.Errorf("pod directories left after the sweep: %v", entries)
	}
	if ids, err := h.runc.list(ctx); err != nil || len(ids) > 0 {
		t.Errorf("runc containers left after the sweep: %v (%v)", ids, err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the crashed host still runs", pid)
		}
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t, cfg)
	after, err := readSysctls(hostSysctls)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("sysctls = %v, want the values from before the crashed host, %v", after, before)
	}
}

// startHelper runs the helper test named test of this binary in a child
// process with env added, and returns it and its stdout.
func startHelper(ctx context.Context, t *testing.T, test string, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	child.Env = append(os.Environ(), env...)
	child.Stderr = os.Stderr
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	return child, stdout
}

func waitForLine(r interface{ Read([]byte) (int, error) }, want string) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == want {
			return nil
		}
	}
	return fmt.Errorf("no %q line: %v", want, sc.Err())
}

// cgroupPIDs lists the processes in the memory hierarchy under parent.
func cgroupPIDs(t *testing.T, parent string) []int {
	t.Helper()
	roots, err := cgroupRoots()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, root := range roots {
		if filepath.Base(root) != "memory" {
			continue
		}
		for _, dir := range cgroupDirs(filepath.Join(root, parent)) {
			data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
