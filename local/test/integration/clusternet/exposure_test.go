package clusternet_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"testing"

	"github.com/ray-operator/ray-operator/internal/testing/exposure"
)

// testExposure looks from the host: the control plane and its add-ons
// listen on loopback and the bridge address only, the API server (at the
// address every client is given) and CoreDNS on the bridge; an anonymous
// request gets 401; keys, tokens and kubeconfigs are the owner's alone.
func (c *cluster) testExposure(t *testing.T) {
	tree, err := exposure.ProcessTree(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	listeners, err := exposure.HeldBy(tree)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("listeners of the cluster: %v", listeners)
	if beyond := exposure.Beyond(listeners, gateway.Addr()); len(beyond) > 0 {
		t.Errorf("listening beyond loopback and the bridge address %v: %v", gateway.Addr(), beyond)
	}
	u, err := url.Parse(c.cp.APIServerURL)
	if err != nil {
		t.Fatal(err)
	}
	api, err := netip.ParseAddrPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []netip.AddrPort{netip.AddrPortFrom(gateway.Addr(), api.Port()), netip.AddrPortFrom(gateway.Addr(), 53)} {
		if !slices.ContainsFunc(listeners, func(l exposure.Listener) bool { return l.Addr == want }) {
			t.Errorf("nothing of the cluster listens on %v", want)
		}
	}
	if status, err := exposure.AnonymousStatus(t.Context(), c.cp.APIServerURL+"/version"); status != http.StatusUnauthorized {
		t.Errorf("anonymous GET %s/version: status %d (%v), want %d", c.cp.APIServerURL, status, err, http.StatusUnauthorized)
	}
	loose, secrets, err := exposure.LooseFiles(c.stateDir, exposure.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if len(loose) > 0 || secrets < 8 { // the API server's and kubelet client's pairs, CAs, sa.key, tokens.csv, kubeconfig
		t.Errorf("of %d secret files (want at least 8), readable by others than the owner: %v", secrets, loose)
	}
}
