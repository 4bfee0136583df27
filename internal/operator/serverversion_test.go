package operator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/features"
)

func TestSidecarRestartSupported(t *testing.T) {
	tests := map[string]struct {
		gitVersion string
		wantErr    string
	}{
		"1.34 is refused":           {gitVersion: "v1.34.2", wantErr: "SidecarSubmitterRestart feature gate requires K8s 1.35+: current version v1.34.2 is below 1.35"},
		"1.35.0 is the minimum":     {gitVersion: "v1.35.0"},
		"1.36.3, ray-local's":       {gitVersion: "v1.36.3"},
		"a vendor suffix is parsed": {gitVersion: "v1.35.1-gke.100"},
		"an unparsable version":     {gitVersion: "unknown", wantErr: "Failed to compare K8s version"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := sidecarRestartSupported(&version.Info{GitVersion: tc.gitVersion})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// versionServer answers /version with gitVersion and counts the requests.
func versionServer(t *testing.T, gitVersion string) (*rest.Config, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(version.Info{Major: "1", Minor: "34", GitVersion: gitVersion})
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}, &asked
}

// TestNewRefusesOldServerForSidecarRestart: the operator does not start with
// SidecarSubmitterRestart against an API server older than 1.35, and asks
// nothing with the gate off.
func TestNewRefusesOldServerForSidecarRestart(t *testing.T) {
	cfg, asked := versionServer(t, "v1.34.2")
	gate := features.NewGate()
	if err := gate.SetFromMap(map[string]bool{string(features.SidecarSubmitterRestart): true}); err != nil {
		t.Fatal(err)
	}
	_, err := New(Settings{Config: configv1alpha1.Configuration{}, Knobs: configv1alpha1.DefaultKnobs(), Features: gate}, cfg)
	want := "SidecarSubmitterRestart feature gate requires K8s 1.35+: current version v1.34.2 is below 1.35"
	if err == nil || err.Error() != want {
		t.Fatalf("New: %v, want %q", err, want)
	}
	if err := checkServerVersion(features.NewGate(), cfg); err != nil || asked.Load() != 1 {
		t.Errorf("gate off: %v, /version asked %d times in all, want 1", err, asked.Load())
	}
}
