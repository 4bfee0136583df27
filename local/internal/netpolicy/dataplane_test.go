package netpolicy

import (
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

// TestInstallDataplane: the kernel takes the rules (the NFQUEUE target
// through nft_compat among them), nft shows them as meant, and deleting the
// table leaves nothing. A bridge of that name need not exist.
func TestInstallDataplane(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "needs root: writes nftables rules")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		capability.Missing(t, "nft is not installed (hack/node-packages.sh installs it)")
	}
	const table = "netpolicy-unit-test"
	if err := installDataplane(table, "npunit0", netip.MustParsePrefix("10.253.0.0/24"), 4321); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteTable(table) })
	out, err := exec.Command("nft", "list", "table", "ip", table).CombinedOutput()
	if err != nil {
		t.Fatalf("nft list table: %v\n%s", err, out)
	}
	listing := string(out)
	// The queue rules of both chains are the bridge's only: postrouting's
	// from it, input's from it too.
	if n := strings.Count(listing, `iifname "npunit0" ip saddr 10.253.0.0/24`); n != 2 {
		t.Errorf("%d rules queue what comes in on npunit0 from the pod range, want 2 (postrouting, input):\n%s", n, listing)
	}
	for _, want := range []string{
		"hook postrouting priority srcnat - 5",
		"hook input priority filter",
		"meta skuid 0 accept",
		"ct state established,related accept",
		`iifname "npunit0" ip saddr 10.253.0.0/24`,
		`oifname "npunit0" ip daddr 10.253.0.0/24`,
		"queue num 4321",
	} {
		if !strings.Contains(listing, want) {
			t.Errorf("nft shows no %q in:\n%s", want, listing)
		}
	}
	if err := deleteTable(table); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("nft", "list", "table", "ip", table).CombinedOutput(); err == nil {
		t.Errorf("table %s remains:\n%s", table, out)
	}
}
