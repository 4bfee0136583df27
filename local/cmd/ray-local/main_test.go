package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-operator/ray-operator/internal/operator"
)

// TestLocalDefaultsListenOnLoopback: ray-local's operator serves its
// metrics, health probes and webhooks on 127.0.0.1 only, at KubeRay's
// ports, unless a flag says otherwise.
func TestLocalDefaultsListenOnLoopback(t *testing.T) {
	tests := map[string]struct {
		args []string
		want []string // metrics, probes, webhook host
	}{
		"defaults":    {want: []string{"127.0.0.1:8080", "127.0.0.1:8082", "127.0.0.1"}},
		"flags win":   {args: []string{"--metrics-addr=:9090", "--health-probe-bind-address=0", "--webhook-host=::1"}, want: []string{":9090", "0", "::1"}},
		"other flags": {args: []string{"--enable-leader-election=true"}, want: []string{"127.0.0.1:8080", "127.0.0.1:8082", "127.0.0.1"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fs := flag.NewFlagSet("ray-local", flag.ContinueOnError)
			opFlags := operator.BindFlags(fs)
			localDefaults(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			settings, err := opFlags.Resolve(func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			got := []string{settings.Config.MetricsAddr, settings.Config.ProbeAddr, settings.Webhooks.Host}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("metrics, probe and webhook addresses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckAddons: cert-manager and Kueue run on the local node only.
func TestCheckAddons(t *testing.T) {
	for name, tc := range map[string]struct {
		flags   localFlags
		tgt     target
		wantErr string
	}{
		"kueue on the local node":     {flags: localFlags{kueue: true}, tgt: target{local: true}},
		"kueue with --simulated":      {flags: localFlags{kueue: true, simulated: true}, tgt: target{local: true}, wantErr: "--kueue needs the local node"},
		"kueue on a remote cluster":   {flags: localFlags{kueue: true}, tgt: target{}, wantErr: "--kueue needs the local node"},
		"gateway on the local node":   {flags: localFlags{gateway: true}, tgt: target{local: true}},
		"gateway with --simulated":    {flags: localFlags{gateway: true, simulated: true}, tgt: target{local: true}, wantErr: "--gateway needs the local node"},
		"gateway on a remote cluster": {flags: localFlags{gateway: true}, tgt: target{}, wantErr: "--gateway needs the local node"},
		"cert-manager remote":         {flags: localFlags{certManager: true}, tgt: target{}, wantErr: "--cert-manager needs the local node"},
		"neither, remote":             {tgt: target{}},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.flags.checkAddons(tc.tgt)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("checkAddons = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
