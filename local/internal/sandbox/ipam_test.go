package sandbox

import (
	"net/netip"
	"testing"
)

func TestIPPoolHandsOutEveryAddressOnceBeforeReuse(t *testing.T) {
	p, err := newIPPool(netip.MustParsePrefix("10.1.2.0/29"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.gateway, netip.MustParseAddr("10.1.2.1"); got != want {
		t.Fatalf("gateway = %s, want %s", got, want)
	}
	var got []string
	for range 5 {
		a, err := p.allocate()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.String())
	}
	want := []string{"10.1.2.2", "10.1.2.3", "10.1.2.4", "10.1.2.5", "10.1.2.6"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("allocations = %v, want %v", got, want)
		}
	}
	if a, err := p.allocate(); err == nil {
		t.Fatalf("allocate on a full pool = %s, want an error", a)
	}
	p.release(netip.MustParseAddr("10.1.2.3"))
	p.release(netip.MustParseAddr("10.1.2.5"))
	a, err := p.allocate()
	if err != nil || a.String() != "10.1.2.3" {
		t.Fatalf("allocate after release = %s, %v; want 10.1.2.3", a, err)
	}
	a, err = p.allocate()
	if err != nil || a.String() != "10.1.2.5" {
		t.Fatalf("second allocate after release = %s, %v; want 10.1.2.5", a, err)
	}
}

func TestIPPoolRejectsTinyOrIPv6Prefixes(t *testing.T) {
	for _, s := range []string{"10.0.0.0/31", "fd00::/64"} {
		if _, err := newIPPool(netip.MustParsePrefix(s)); err == nil {
			t.Errorf("newIPPool(%s) succeeded, want an error", s)
		}
	}
}
