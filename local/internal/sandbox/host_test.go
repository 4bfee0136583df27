package sandbox

import (
	"syscall"
	"testing"
	"time"
)

func TestContainerExitCodes(t *testing.T) {
	h := newTestHost(t, 1)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-exit", Namespace: "ns", Name: "exit"})
	if err != nil {
		t.Fatal(err)
	}
	c, _, stderr := startBash(t, s, "seven", "exit 7")
	if got := waitDone(ctx, t, c, stderr); got != 7 {
		t.Errorf("exit 7: ExitCode = %d, want 7; stderr: %s", got, stderr)
	}

	// sleep is PID 1 of its PID namespace: the kernel drops a SIGTERM it has
	// no handler for (as in any container), so it keeps running until killed.
	c, _, stderr = startBash(t, s, "sleeper", "", func(cs *ContainerSpec) { cs.Args = []string{"sleep", "1000"} })
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Exec(ctx, ExecSpec{Args: []string{"true"}}); err != nil || code != 0 {
		t.Fatalf("exec in the SIGTERM'd sleep = %d, %v; want it still running", code, err)
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := waitDone(ctx, t, c, stderr); got != 137 {
		t.Errorf("killed sleep: ExitCode = %d, want 137; stderr: %s", got, stderr)
	}

	// A first process with a TERM handler that re-raises it dies by SIGTERM
	// only outside PID 1; bash forwarding it to its child reports 128+15.
	c, stdout, stderr := startBash(t, s, "trapper", `trap 'kill -TERM $child; wait $child; exit $?' TERM; sleep 1000 & child=$!; echo started; wait $child`)
	if err := stdout.waitFor(ctx, "started"); err != nil {
		t.Fatal(err)
	}
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := waitDone(ctx, t, c, stderr); got != 143 {
		t.Errorf("SIGTERM'd sleep under bash: ExitCode = %d, want 143; stderr: %s", got, stderr)
	}
	if !c.FinishedAt().After(c.StartedAt()) {
		t.Errorf("FinishedAt %s is not after StartedAt %s", c.FinishedAt(), c.StartedAt())
	}
}
