package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/local/internal/node"
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

// TestNodeCapacityFlags: --node-cpu and --node-memory reach the node's
// capacity, defaults follow node.ChooseCapacity, bad values are refused
// before anything starts.
func TestNodeCapacityFlags(t *testing.T) {
	machine := node.Machine{CPUs: 2, MemoryBytes: 8 << 30}
	for name, tc := range map[string]struct {
		args              []string
		cpu, mem, wantErr string
	}{
		"defaults":          {cpu: "16", mem: "8Gi"},
		"both set":          {args: []string{"--node-cpu=6", "--node-memory=4Gi"}, cpu: "6", mem: "4Gi"},
		"memory overcommit": {args: []string{"--node-memory=16Gi"}, cpu: "16", mem: "16Gi"},
		"bad cpu":           {args: []string{"--node-cpu=-1"}, wantErr: "--node-cpu=-1: the node must advertise at least 1 CPU"},
		"bad memory":        {args: []string{"--node-memory=100Mi"}, wantErr: "--node-memory=100Mi: the node must advertise at least 1Gi"},
		"unparsable":        {args: []string{"--node-memory=much"}, wantErr: "--node-memory=much:"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := flag.NewFlagSet("ray-local", flag.ContinueOnError)
			l := bindLocalFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			l.machine = machine
			err := l.parseNodeFlags()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseNodeFlags = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cpu, mem := l.capacity.Resources[corev1.ResourceCPU], l.capacity.Resources[corev1.ResourceMemory]
			if cpu.Cmp(resource.MustParse(tc.cpu)) != 0 || mem.Cmp(resource.MustParse(tc.mem)) != 0 {
				t.Errorf("capacity cpu %s memory %s, want %s and %s", cpu.String(), mem.String(), tc.cpu, tc.mem)
			}
		})
	}
}
