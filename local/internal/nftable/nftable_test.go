package nftable

import (
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/nftables"
	"github.com/google/nftables/expr"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

func TestIfName(t *testing.T) {
	got := IfName("br0")
	want := append([]byte("br0"), make([]byte, 13)...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IfName(br0) (-want +got):\n%s", diff)
	}
}

func TestInPrefix(t *testing.T) {
	got := InPrefix(IPv4DestinationOffset, netip.MustParsePrefix("10.1.2.3/16"))
	want := []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte{255, 255, 0, 0}, Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{10, 1, 0, 0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("InPrefix (-want +got):\n%s", diff)
	}
}

// TestReplaceExistsDelete: Replace creates the table with its chain and
// rules, a second Replace leaves one table as the second asked, an error
// of add is returned with nothing created, and Delete removes the table
// and may be called again.
func TestReplaceExistsDelete(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "needs root: writes nftables tables")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		capability.Missing(t, "nft is not installed (hack/node-packages.sh installs it)")
	}
	const table = "nftable-unit-test"
	t.Cleanup(func() { _ = Delete(nftables.TableFamilyBridge, table) })
	withRule := func(iface string) func(c *nftables.Conn, t *nftables.Table) error {
		return func(c *nftables.Conn, t *nftables.Table) error {
			AddBaseChain(c, t, "prerouting", nftables.ChainTypeFilter, nftables.ChainHookPrerouting, nftables.ChainPriorityFilter,
				Join(IfNameIs(expr.MetaKeyIIFNAME, iface), []expr.Any{&expr.Verdict{Kind: expr.VerdictAccept}}))
			return nil
		}
	}
	for _, iface := range []string{"first0", "second0"} {
		if err := Replace(nftables.TableFamilyBridge, table, withRule(iface)); err != nil {
			t.Fatal(err)
		}
	}
	listing := nftList(t, table)
	if strings.Contains(listing, "first0") || !strings.Contains(listing, `iifname "second0" accept`) ||
		!strings.Contains(listing, "policy accept") {
		t.Errorf("want only the second Replace's accepting chain and rule:\n%s", listing)
	}
	failed := errors.New("add failed")
	if err := Replace(nftables.TableFamilyBridge, table, func(*nftables.Conn, *nftables.Table) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("Replace with a failing add = %v, want %v", err, failed)
	}
	if exists, err := Exists(nftables.TableFamilyBridge, table); err != nil || exists {
		t.Errorf("after a failed Replace: Exists = %v, %v; want false, nil", exists, err)
	}
	if err := Replace(nftables.TableFamilyBridge, table, withRule("third0")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := Delete(nftables.TableFamilyBridge, table); err != nil {
			t.Fatal(err)
		}
	}
	if exists, err := Exists(nftables.TableFamilyBridge, table); err != nil || exists {
		t.Errorf("after Delete: Exists = %v, %v; want false, nil", exists, err)
	}
}

func nftList(t *testing.T, table string) string {
	t.Helper()
	out, err := exec.Command("nft", "list", "table", "bridge", table).CombinedOutput()
	if err != nil {
		t.Fatalf("nft list table bridge %s: %v\n%s", table, err, out)
	}
	return string(out)
}
