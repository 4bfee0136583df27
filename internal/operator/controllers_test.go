package operator

import (
	"testing"

	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
)

// TestRayCronJobBehindItsGate: the RayCronJob controller runs only with the
// RayCronJob gate on (KubeRay's alpha gate, off by default); the others
// always run.
func TestRayCronJobBehindItsGate(t *testing.T) {
	for _, on := range []bool{false, true} {
		gate := features.NewGate()
		if on {
			if err := gate.Set("RayCronJob=true"); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]bool{}
		for _, c := range DefaultControllers() {
			got[c.Name] = c.Enabled == nil || c.Enabled(Deps{Features: gate})
		}
		want := map[string]bool{"RayCluster": true, "RayJob": true, "RayService": true, "RayCronJob": on}
		for name, enabled := range want {
			if got[name] != enabled {
				t.Errorf("gate RayCronJob=%v: %s enabled %v, want %v", on, name, got[name], enabled)
			}
		}
	}
}

// TestDashboardProviderFromDeps: a provider in Deps (a test's fake
// dashboard) is what the RayJob controller gets, not an HTTP client (with
// AsyncJobInfoQuery off; on, the job info cache wraps it).
func TestDashboardProviderFromDeps(t *testing.T) {
	fake := dashboardtest.NewFake()
	gate := features.NewGate()
	if err := gate.Set("AsyncJobInfoQuery=false"); err != nil {
		t.Fatal(err)
	}
	provider, err := dashboardProvider(nil, Deps{Features: gate, Dashboards: fake.Provider()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := provider("http://head:8265", "")
	if err != nil || got != dashboard.Client(fake) {
		t.Errorf("provider gave %T (%v), want the fake", got, err)
	}
}
