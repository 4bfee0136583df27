package sandbox

import (
	"testing"
	"time"
)

// TestUsage: a container that holds 64 MiB and burns CPU shows both in its
// sandbox's Usage and its own (with a working set of at least what it
// holds); an empty sandbox shows nothing.
func TestUsage(t *testing.T) {
	h := newTestHost(t, 7)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-usage", Namespace: "ns", Name: "usage"})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := s.Usage(); err != nil || u != (Usage{}) {
		t.Fatalf("Usage() of a sandbox without containers = %+v, %v; want zero", u, err)
	}
	const held = 64 << 20
	c, out, stderr := startBash(t, s, "hold", `exec python3 -c '
import time
x = bytearray(64 << 20)
for i in range(0, len(x), 4096):
    x[i] = 1
while time.process_time() < 0.3:
    pass
print("holding", flush=True)
time.sleep(600)
'`)
	if err := out.waitFor(ctx, "holding"); err != nil {
		t.Fatalf("%v; stderr: %s", err, stderr)
	}
	u, err := s.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.RSSBytes < held || u.MemoryBytes < u.RSSBytes || u.CPU < 200*time.Millisecond {
		t.Fatalf("Usage() = %+v; want RSS >= %d, memory >= RSS, CPU >= 200ms", u, held)
	}
	cu, err := c.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if cu.WorkingSetBytes < held || cu.WorkingSetBytes > cu.MemoryBytes || cu.CPU < 200*time.Millisecond {
		t.Fatalf("Container.Usage() = %+v; want held <= working set <= memory, CPU >= 200ms", cu)
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
}
