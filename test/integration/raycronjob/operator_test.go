package raycronjob_test

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

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
	env := testenv.Shared(t)
	w := &world{t: t, env: env, c: env.Client, ns: env.Namespace(t), clock: clocktesting.NewFakeClock(time.Now())}
	startOperatorRayCronJob(t, w)

	_, first := w.createCronJob(everyMinute("wired").Obj())
	w.waitScheduled("wired", first)

	w.eventually("the RayCronJob metrics in the registry", func() (bool, error) {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			return false, err
		}
		for _, want := range []struct {
			family string
			labels map[string]string
			value  float64
		}{
			{"kuberay_cronjob_info", map[string]string{"name": "wired", "namespace": w.ns, "schedule": "* * * * *", "time_zone": "UTC", "concurrency_policy": "Allow"}, 1},
			{"kuberay_cronjob_rayjob_creations_total", map[string]string{"name": "wired", "namespace": w.ns, "outcome": "created"}, 1},
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
func startOperatorRayCronJob(t *testing.T, w *world) {
	t.Helper()
	mgr, err := ctrl.NewManager(w.env.Config, ctrl.Options{
		Scheme:     w.env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      operator.CacheOptions(w.ns),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	gate := features.NewGate()
	if err := gate.Set("RayCronJob=true"); err != nil {
		t.Fatal(err)
	}
	deps := operator.Deps{
		Config:   configv1alpha1.Configuration{EnableMetrics: true, ReconcileConcurrency: 1},
		Features: gate,
		Clock:    w.clock,
	}
	found := false
	for _, c := range operator.DefaultControllers() {
		if c.Name != "RayCronJob" {
			continue
		}
		found = true
		if !c.Enabled(deps) {
			t.Fatal("the RayCronJob controller is off with its gate on")
		}
		if err := c.Setup(mgr, deps); err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatal("the operator registers no RayCronJob controller")
	}
	w.run.Start(mgr)
	t.Cleanup(w.stop)
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
