package raycronjob_test

import (
	"errors"
	"fmt"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// TestOperatorWiresRayCronJob: the RayCronJob controller as the operator
// registers it (operator.DefaultControllers, gate RayCronJob on,
// --enable-metrics) creates the RayJobs and feeds its metrics into
// controller-runtime's registry, which the metrics endpoint serves.
func TestOperatorWiresRayCronJob(t *testing.T) {
	w := &world{World: testenv.NewWorld(t, testenv.Shared(t)), clock: newClock()}
	startOperatorRayCronJob(w)

	_, first := w.createCronJob(everyMinute("wired").Obj())
	w.waitScheduled("wired", first)

	w.Eventually("the RayCronJob metrics in the registry", func() (bool, error) {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			return false, err
		}
		for _, want := range []struct {
			family string
			labels map[string]string
			value  float64
		}{
			{"kuberay_cronjob_info", map[string]string{"name": "wired", "namespace": w.NS, "schedule": "* * * * *", "time_zone": "UTC", "concurrency_policy": "Allow"}, 1},
			{"kuberay_cronjob_rayjob_creations_total", map[string]string{"name": "wired", "namespace": w.NS, "outcome": "created"}, 1},
		} {
			if got, ok := seriesValue(families, want.family, want.labels); !ok || got != want.value {
				return false, fmt.Errorf("%s%v = %v (present %v), want %v", want.family, want.labels, got, ok, want.value)
			}
		}
		return true, nil
	})
}

// startOperatorRayCronJob runs, for w's namespace, the RayCronJob controller
// set up exactly as the operator sets it up with the gate on and metrics.
func startOperatorRayCronJob(w *world) {
	w.T.Helper()
	gate := features.NewGate()
	if err := gate.Set("RayCronJob=true"); err != nil {
		w.T.Fatal(err)
	}
	deps := operator.Deps{
		Config:   configv1alpha1.Configuration{EnableMetrics: true, ReconcileConcurrency: 1},
		Features: gate,
		Clock:    w.clock,
	}
	w.op = testenv.StartOperator(w.T, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		w.clock.newOperator()
		for _, c := range operator.DefaultControllers() {
			if c.Name != "RayCronJob" {
				continue
			}
			if !c.Enabled(deps) {
				return errors.New("the RayCronJob controller is off with its gate on")
			}
			return c.Setup(mgr, deps)
		}
		return errors.New("the operator registers no RayCronJob controller")
	})
}

// seriesValue returns the value of the series of family carrying all
// labels (gauge or counter).
func seriesValue(families []*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched != len(labels) {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}
