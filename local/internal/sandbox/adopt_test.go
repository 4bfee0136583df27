package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDetachedHostIsAdopted: a host starts two pods and lets go of them
// (Detach, as a stopped kubelet); one container ends while no host
// watches. A new host with Adopt takes both pods over with their
// addresses and the running container with its id and start time; its
// log goes on, exec and attach work, the ended container reports its exit
// code, a new pod gets a free address, and Close leaves nothing.
func TestDetachedHostIsAdopted(t *testing.T) {
	cfg := testHostConfig(t, 15)
	ctx := testContext(t, 2*time.Minute)
	first, err := NewHost(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ticking, _ := first.CreateSandbox(ctx, SandboxSpec{UID: "uid-ticking", Namespace: "ns", Name: "ticking"})
	ending, err := first.CreateSandbox(ctx, SandboxSpec{UID: "uid-ending", Namespace: "ns", Name: "ending"})
	if err != nil || ticking == nil {
		t.Fatal(err)
	}
	ticker, out, _ := startBash(t, ticking, "main", `i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.1; done`)
	logPath := filepath.Join(t.TempDir(), "short.log")
	short, err := ending.Start(ctx, ContainerSpec{Name: "short", Attempt: 2, Args: []string{"bash", "-c", "sleep 1; exit 3"}, Env: testEnv, LogPath: logPath})
	if err != nil {
		t.Fatal(err)
	}
	if err := out.waitFor(ctx, "tick 2\n"); err != nil {
		t.Fatal(err)
	}
	if err := first.Detach(); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	// The short container ends while no host watches: conmon records it.
	waitForFile(ctx, t, first.monitor.exitFile(short.ID()))

	cfg.Adopt = true
	adoptedAt := time.Now()
	second, err := NewHost(ctx, cfg)
	if err != nil {
		t.Fatalf("NewHost with Adopt: %v", err)
	}
	t.Cleanup(func() {
		if err := second.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		assertNothingLeft(t, cfg)
	})
	adopted := map[string]*Sandbox{}
	for _, s := range second.Sandboxes() {
		adopted[s.Spec().UID] = s
	}
	if len(adopted) != 2 || adopted["uid-ticking"] == nil || adopted["uid-ending"] == nil {
		t.Fatalf("adopted sandboxes %v, want uid-ticking and uid-ending", adopted)
	}
	if a := adopted["uid-ticking"]; a.IP() != ticking.IP() || a.Dir() != ticking.Dir() {
		t.Errorf("adopted sandbox at %s in %s, want %s in %s", a.IP(), a.Dir(), ticking.IP(), ticking.Dir())
	}
	checkAdoptedTicker(ctx, t, adopted["uid-ticking"], ticker, out)
	checkAdoptedEnded(ctx, t, adopted["uid-ending"], short, adoptedAt)

	fresh, err := second.CreateSandbox(ctx, SandboxSpec{UID: "uid-fresh", Namespace: "ns", Name: "fresh"})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.IP() == ticking.IP() || fresh.IP() == ending.IP() {
		t.Errorf("a new sandbox got %s, an adopted one's address", fresh.IP())
	}
	if fresh.ids.base == ticking.ids.base || fresh.ids.base == ending.ids.base {
		t.Errorf("a new sandbox got the id range at %d, an adopted one's", fresh.ids.base)
	}
}

// checkAdoptedTicker checks the adopted running container: the same id,
// name, attempt and start time, still running and logging, with exec and
// attach.
func checkAdoptedTicker(ctx context.Context, t *testing.T, s *Sandbox, was *Container, out *output) {
	t.Helper()
	cs := s.Adopted()
	if len(cs) != 1 {
		t.Fatalf("adopted containers %d, want 1", len(cs))
	}
	c := cs[0]
	if c.ID() != was.ID() || c.Name() != "main" || c.Attempt() != 0 || !c.StartedAt().Equal(was.StartedAt()) {
		t.Errorf("adopted %s %s attempt %d started %s, want %s main 0 started %s", c.ID(), c.Name(), c.Attempt(), c.StartedAt(), was.ID(), was.StartedAt())
	}
	select {
	case <-c.Done():
		t.Fatalf("the adopted running container is done (exit %d)", c.ExitCode())
	default:
	}
	if err := out.waitFor(ctx, "tick 30\n"); err != nil {
		t.Errorf("the log stopped: %v", err)
	}
	var got strings.Builder
	if code, err := c.Exec(ctx, ExecSpec{Args: []string{"echo", "exec-ok"}, Stdout: &got}); err != nil || code != 0 || got.String() != "exec-ok\n" {
		t.Errorf("Exec in the adopted container = %d, %v, %q", code, err, got.String())
	}
	attached := newOutput()
	attachCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Attach(attachCtx, AttachSpec{Stdout: attached}) }()
	if err := attached.waitFor(ctx, "tick"); err != nil {
		t.Errorf("Attach to the adopted container: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Attach: %v", err)
	}
}

// checkAdoptedEnded checks the container that ended while no host watched:
// adopted, then done with its exit code and cleaned up.
func checkAdoptedEnded(ctx context.Context, t *testing.T, s *Sandbox, was *Container, adoptedAt time.Time) {
	t.Helper()
	cs := s.Adopted()
	if len(cs) != 1 || cs[0].ID() != was.ID() {
		t.Fatalf("adopted containers %v, want %s", cs, was.ID())
	}
	c := cs[0]
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the adopted ended container never got done")
	}
	if c.ExitCode() != 3 || c.Attempt() != 2 || c.Name() != "short" {
		t.Errorf("ended container %s attempt %d exit %d, want short attempt 2 exit 3", c.Name(), c.Attempt(), c.ExitCode())
	}
	if !c.FinishedAt().Before(adoptedAt) || !c.FinishedAt().After(c.StartedAt()) {
		t.Errorf("ended container finished at %s, want between its start %s and the adoption %s", c.FinishedAt(), c.StartedAt(), adoptedAt)
	}
	if _, err := os.Stat(c.dir); err == nil {
		t.Errorf("the ended container's bundle %s is left", c.dir)
	}
}

// waitForFile polls until path exists.
func waitForFile(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never appeared", path)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// adoptStateEnv names the state directory of TestAdoptHelper's host.
const adoptStateEnv = "SANDBOX_TEST_ADOPT_STATE_DIR"

// TestAdoptHelper is run by TestKilledHostIsAdopted in a child process: a
// host with one ticking container, reported as "READY <id> <ip>
// <started>", waiting to be killed.
func TestAdoptHelper(t *testing.T) {
	stateDir := os.Getenv(adoptStateEnv)
	if stateDir == "" {
		t.Skip("helper process of TestKilledHostIsAdopted")
	}
	cfg := HostConfig{StateDir: stateDir, BridgeName: os.Getenv(crashBridgeEnv), PodCIDR: netip.MustParsePrefix(adoptPodCIDR), RuncBinary: requireHost(t)}
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.CreateSandbox(context.Background(), SandboxSpec{UID: "uid-killed", Namespace: "ns", Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Start(context.Background(), ContainerSpec{Name: "main", Args: []string{"bash", "-c", `i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.1; done`},
		Env: testEnv, LogPath: filepath.Join(stateDir, "main.log")})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("READY %s %s %s\n", c.ID(), s.IP(), c.StartedAt().Format(time.RFC3339Nano))
	select {}
}

const adoptPodCIDR = "10.250.16.0/24"

// TestKilledHostIsAdopted: the process running a host is SIGKILLed (no
// cleanup at all); a new host with Adopt takes its pod and running
// container over, whose log goes on and which exec reaches; Close then
// leaves nothing and no process of the pod.
func TestKilledHostIsAdopted(t *testing.T) {
	cfg := testHostConfig(t, 16)
	ctx := testContext(t, 2*time.Minute)
	claimHost(t, cfg)
	child, stdout := startHelper(ctx, t, "TestAdoptHelper", adoptStateEnv+"="+cfg.StateDir, crashBridgeEnv+"="+cfg.BridgeName)
	ready, err := readyLine(stdout)
	if err != nil {
		_ = child.Process.Kill()
		t.Fatalf("helper: %v", err)
	}
	pids := cgroupPIDs(t, newNames(cfg.StateDir, cfg.BridgeName).cgroupParent())
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	cfg.PodCIDR, cfg.Adopt = netip.MustParsePrefix(adoptPodCIDR), true
	h, err := NewHost(ctx, cfg)
	if err != nil {
		t.Fatalf("NewHost with Adopt: %v", err)
	}
	sandboxes := h.Sandboxes()
	if len(sandboxes) != 1 || len(sandboxes[0].Adopted()) != 1 {
		t.Fatalf("adopted %d sandboxes, want one with one container", len(sandboxes))
	}
	s, c := sandboxes[0], sandboxes[0].Adopted()[0]
	if got := []string{c.ID(), s.IP().String(), c.StartedAt().Format(time.RFC3339Nano)}; strings.Join(got, " ") != strings.Join(ready, " ") {
		t.Errorf("adopted container, address, start %v; the killed host reported %v", got, ready)
	}
	logged := newOutput()
	followLog(t, filepath.Join(cfg.StateDir, "main.log"), c.Done(), map[string]*output{"stdout": logged})
	if err := logged.waitFor(ctx, "tick 40\n"); err != nil {
		t.Errorf("the adopted container's log: %v", err)
	}
	var got strings.Builder
	if code, err := c.Exec(ctx, ExecSpec{Args: []string{"echo", "exec-ok"}, Stdout: &got}); err != nil || code != 0 {
		t.Errorf("Exec in the adopted container = %d, %v, %q", code, err, got.String())
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if c.ExitCode() != 137 {
		t.Errorf("the adopted container's exit code after Close = %d, want 137 (SIGKILL)", c.ExitCode())
	}
	assertNothingLeft(t, cfg)
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the adopted pod still runs after Close", pid)
		}
	}
}

// readyLine reads the helper's "READY ..." line and returns its fields
// after READY.
func readyLine(r interface{ Read([]byte) (int, error) }) ([]string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 1 && f[0] == "READY" {
			return f[1:], nil
		}
	}
	return nil, fmt.Errorf("no READY line: %v", sc.Err())
}
