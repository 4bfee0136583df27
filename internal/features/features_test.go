package features

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/featuregate"
)

func TestDefaults(t *testing.T) {
	want := map[string]bool{
		"RayClusterStatusConditions":       true,
		"RayJobDeletionPolicy":             true,
		"RayMultiHostIndexing":             true,
		"RayServiceIncrementalUpgrade":     true,
		"RayCronJob":                       false,
		"AsyncJobInfoQuery":                false,
		"SidecarSubmitterRestart":          false,
		"RayClusterNetworkPolicy":          false,
		"GCSFaultToleranceEmbeddedStorage": false,
		"RayClusterMTLS":                   false,
		"RayClusterHistoryServer":          false,
		"KubernetesWAS":                    false,
	}
	if diff := cmp.Diff(want, State(NewGate())); diff != "" {
		t.Errorf("default gates mismatch (-want +got):\n%s", diff)
	}
}

func TestMaturity(t *testing.T) {
	for f, spec := range Specs() {
		wantPre := featuregate.Alpha
		if spec.Default {
			wantPre = featuregate.Beta
		}
		if spec.PreRelease != wantPre {
			t.Errorf("%s: default %v with maturity %s; KubeRay's on-by-default gates are beta, the rest alpha", f, spec.Default, spec.PreRelease)
		}
	}
}

func TestBuild(t *testing.T) {
	tests := map[string]struct {
		config  map[string]bool
		flag    string
		want    map[featuregate.Feature]bool
		wantErr string
	}{
		"nothing set":       {want: map[featuregate.Feature]bool{RayCronJob: false, RayJobDeletionPolicy: true}},
		"flag":              {flag: "RayCronJob=true,RayJobDeletionPolicy=false", want: map[featuregate.Feature]bool{RayCronJob: true, RayJobDeletionPolicy: false}},
		"config":            {config: map[string]bool{"RayCronJob": true}, want: map[featuregate.Feature]bool{RayCronJob: true}},
		"flag wins":         {config: map[string]bool{"RayCronJob": true}, flag: "RayCronJob=false", want: map[featuregate.Feature]bool{RayCronJob: false}},
		"unknown in flag":   {flag: "NoSuchGate=true", wantErr: "--feature-gates"},
		"unknown in config": {config: map[string]bool{"NoSuchGate": true}, wantErr: "featureGates in configuration"},
		"bad value":         {flag: "RayCronJob=maybe", wantErr: "RayCronJob"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gate, err := Build(tc.config, tc.flag)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Build() error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build() error = %v", err)
			}
			for f, want := range tc.want {
				if got := gate.Enabled(f); got != want {
					t.Errorf("Enabled(%s) = %v, want %v", f, got, want)
				}
			}
		})
	}
}

func TestGatesAreIndependent(t *testing.T) {
	a, b := NewGate(), NewGate()
	if err := a.Set("RayCronJob=true"); err != nil {
		t.Fatal(err)
	}
	if b.Enabled(RayCronJob) {
		t.Error("setting one gate changed another")
	}
}
