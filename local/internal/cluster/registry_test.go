package cluster

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestRegistryServesOnLoopbackOnly(t *testing.T) {
	if _, err := startRegistry(netip.MustParseAddrPort("0.0.0.0:0"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("startRegistry on 0.0.0.0 = %v; want a refusal naming loopback", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddrPort(l.Addr().String())
	l.Close()
	r, err := startRegistry(addr, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(addr.String() + "/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	got, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	if d, _ := got.Digest(); d != want {
		t.Errorf("pulled %s, pushed %s", d, want)
	}
	if err := r.close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Image(ref); err == nil {
		t.Error("the registry still answers after close")
	}
}
