package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/vishvananda/netlink"
)

// TestDeadHostsAreSweptLiveOnesKept: two hosts under state directories of
// their own have their objects on the machine (a pod network namespace and
// veth, a cgroup with a process in it, a mount under the state directory
// and one under the run directory, the bridge and nftables table); one's
// process is dead, the other's runs. Two more dead hosts are recorded, one
// with the live one's bridge, one with its state directory. A third host
// entering the registry sweeps everything of the dead one and the records
// of the dead ones, and leaves the live one's objects and record alone.
func TestDeadHostsAreSweptLiveOnesKept(t *testing.T) {
	requireHost(t)
	reg := ownerRegistry{dir: t.TempDir(), log: logr.Discard()}
	dead, live := fakeHost(t, reg, 22, deadIdentity(t)), fakeHost(t, reg, 23, processIdentity(os.Getpid()))
	for _, twin := range []ownerRecord{
		{StateDir: t.TempDir(), Bridge: live.cfg.BridgeName, Role: roleNetwork, Owner: deadIdentity(t)},
		{StateDir: live.cfg.StateDir, Bridge: "rsbtwin", Role: roleHost, Owner: deadIdentity(t)},
	} {
		must(t, func() error { return reg.record(twin) })
	}
	for _, f := range []fakeObjects{dead, live} { // even when the test fails
		t.Cleanup(func() { _ = f.dead().sweep(context.Background(), logr.Discard()) })
	}

	third := testHostConfig(t, 24)
	if err := reg.enter(t.Context(), third, roleClaim); err != nil {
		t.Fatal(err)
	}
	assertMachineClean(t, dead.cfg)
	if alive(dead.pid) {
		t.Errorf("process %d in the dead host's cgroup still runs", dead.pid)
	}
	live.assertIntact(t)
	byTag, err := reg.read()
	if err != nil {
		t.Fatal(err)
	}
	if len(byTag) != 2 || len(byTag[live.names().tag]) != 2 || len(byTag[newNames(third.StateDir, third.BridgeName).tag]) != 1 {
		t.Errorf("records after the sweep: %v; want none of the dead hosts, two of the live one, one of the new one", byTag)
	}
	if err := reg.leave(newNames(third.StateDir, third.BridgeName), roleClaim); err != nil {
		t.Fatal(err)
	}
}

// TestKilledHostIsSweptByAnotherHost: a host whose process is killed
// (SIGKILL) leaves its containers running, its mounts, namespaces, cgroups,
// bridge and nftables table; the next host on the machine, under another
// state directory, sweeps all of it, and a live host beside them keeps its
// running container.
func TestKilledHostIsSweptByAnotherHost(t *testing.T) {
	live := newTestHost(t, 21)
	ctx := testContext(t, 2*time.Minute)
	s, err := live.CreateSandbox(ctx, SandboxSpec{UID: "uid-live", Namespace: "ns", Name: "live"})
	if err != nil {
		t.Fatal(err)
	}
	ticker, out, _ := startBash(t, s, "main", `i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.1; done`)
	killed := testHostConfig(t, 8) // the crash helper's pod CIDR
	child, stdout := startHelper(ctx, t, "TestCrashHelper", crashStateEnv+"="+killed.StateDir, crashBridgeEnv+"="+killed.BridgeName)
	if err := waitForLine(stdout, "READY"); err != nil {
		_ = child.Process.Kill()
		t.Fatalf("helper: %v", err)
	}
	pids := cgroupPIDs(t, newNames(killed.StateDir, killed.BridgeName).cgroupParent())
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	next, err := NewHost(ctx, testHostConfig(t, 20))
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, pids)
	assertMachineClean(t, killed)
	select {
	case <-ticker.Done():
		t.Errorf("the live host's container ended with the sweep: exit code %d", ticker.ExitCode())
	default:
	}
	if !waitLonger(ctx, out, len(out.String())) {
		t.Error("the live host's container writes nothing after the sweep")
	}
}

// waitLonger waits until out has grown past seen bytes.
func waitLonger(ctx context.Context, out *output, seen int) bool {
	for len(out.String()) <= seen {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// waitGone waits a little until none of pids runs.
func waitGone(ctx context.Context, t *testing.T, pids []int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, pid := range pids {
		for alive(pid) {
			select {
			case <-ctx.Done():
				t.Fatalf("process %d of the killed host still runs", pid)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// fakeObjects are objects on the machine named as a host's.
type fakeObjects struct {
	cfg HostConfig
	pid int // a process in the host's cgroup
}

func (f fakeObjects) names() names { return newNames(f.cfg.StateDir, f.cfg.BridgeName) }

// dead is the fake host as a dead host that shares nothing.
func (f fakeObjects) dead() deadHost {
	return deadHost{stateDir: f.cfg.StateDir, names: f.names(), ownsStateDir: true, ownsNetwork: true}
}

// fakeHost records a host with pod CIDR k run by the process of identity,
// as its network and its host, and makes its objects.
func fakeHost(t *testing.T, reg ownerRegistry, k int, identity string) fakeObjects {
	t.Helper()
	f := fakeObjects{cfg: testHostConfig(t, k)}
	n := f.names()
	for _, role := range []ownerRole{roleNetwork, roleHost} {
		if err := reg.record(ownerRecord{StateDir: f.cfg.StateDir, Bridge: f.cfg.BridgeName, Role: role, Owner: identity}); err != nil {
			t.Fatal(err)
		}
	}
	gateway := f.cfg.PodCIDR.Addr().Next()
	must(t, func() error { _, err := setupBridge(f.cfg.BridgeName, gateway, f.cfg.PodCIDR); return err })
	must(t, func() error { return installNftTable(n.nftTable(), f.cfg.BridgeName, f.cfg.PodCIDR) })
	must(t, func() error { ns, err := newNamedNetns(n.netns("uid")); _ = ns.Close(); return err })
	must(t, func() error {
		return netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: n.veth("uid")}, PeerName: "rp" + n.tag + podKey("uid")})
	})
	for _, dir := range []string{filepath.Join(f.cfg.StateDir, "pods", "uid"), filepath.Join(n.runDir(), "c")} {
		must(t, func() error { return os.MkdirAll(dir, 0o755) })
		must(t, func() error { return mountTmpfs(dir, 1<<20) })
	}
	f.pid = sleepInCgroup(t, n.cgroupParent()+"/c")
	return f
}

// assertIntact checks that the fake host's objects are all there.
func (f fakeObjects) assertIntact(t *testing.T) {
	t.Helper()
	n := f.names()
	if _, err := netlink.LinkByName(f.cfg.BridgeName); err != nil {
		t.Errorf("the live host's bridge: %v", err)
	}
	if _, err := netlink.LinkByName(n.veth("uid")); err != nil {
		t.Errorf("the live host's veth: %v", err)
	}
	if ok, err := nftTableExists(n.nftTable()); !ok || err != nil {
		t.Errorf("the live host's nftables table: %v, %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(netnsDir, n.netns("uid"))); err != nil {
		t.Errorf("the live host's network namespace: %v", err)
	}
	for _, dir := range []string{f.cfg.StateDir, n.runDir()} {
		if points, err := mountsUnder(dir); len(points) != 1 || err != nil {
			t.Errorf("mounts of the live host under %s: %v, %v", dir, points, err)
		}
	}
	if !alive(f.pid) {
		t.Errorf("process %d in the live host's cgroup was killed", f.pid)
	}
}

// sleepInCgroup starts a process in cgroup (relative to each hierarchy's
// root) and returns its pid; the cgroup's removal kills it.
func sleepInCgroup(t *testing.T, cgroup string) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	roots, err := cgroupRoots()
	if err != nil {
		t.Fatal(err)
	}
	for _, root := range roots {
		dir := filepath.Join(root, cgroup)
		must(t, func() error { return os.MkdirAll(dir, 0o755) })
		if filepath.Base(root) == "memory" {
			must(t, func() error {
				return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
			})
		}
	}
	return cmd.Process.Pid
}

// deadIdentity is the identity of a process that ran and is gone.
func deadIdentity(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	identity := processIdentity(cmd.Process.Pid)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if processRuns(identity) {
		t.Fatal(errors.New("a killed process still runs"))
	}
	return identity
}

// claimHost records this process as an owner of the host of cfg until the
// test ends, so that no start on the machine sweeps what a helper process
// running that host leaves when the test kills it: the test takes it over.
func claimHost(t *testing.T, cfg HostConfig) {
	t.Helper()
	reg := defaultOwners(logr.Discard())
	must(t, func() error { return reg.enter(t.Context(), cfg, roleClaim) })
	t.Cleanup(func() { _ = reg.leave(newNames(cfg.StateDir, cfg.BridgeName), roleClaim) })
}

func must(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}
