package sandbox

import (
	"slices"
	"testing"
	"time"
)

// TestInventory: a running pod shows in the host's inventory (its sandbox
// directory, netns and cgroups, and the host's nftables rules), and once
// destroyed it no longer does.
func TestInventory(t *testing.T) {
	h := newTestHost(t, 15)
	ctx := testContext(t, time.Minute)
	before, err := ReadInventory(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Sandboxes)+len(before.Netns)+len(before.Cgroups) != 0 || before.NftRules < 3 {
		t.Fatalf("inventory of an empty host: %+v; want no pod objects and at least the host's 3 rules", before)
	}
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-inventory", Namespace: "ns", Name: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	startBash(t, s, "main", "exec sleep infinity")
	during, err := ReadInventory(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(during.Sandboxes, []string{"uid-inventory"}) || !slices.Equal(during.Netns, []string{h.names.netns("uid-inventory")}) || len(during.Cgroups) == 0 {
		t.Errorf("inventory with a running pod: %+v; want its sandbox, its netns and its cgroups", during)
	}
	if err := s.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := ReadInventory(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Sandboxes)+len(after.Netns)+len(after.Cgroups) != 0 {
		t.Errorf("inventory after Destroy: %+v; want no pod objects", after)
	}
}
