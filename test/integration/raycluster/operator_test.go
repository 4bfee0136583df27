package raycluster_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"k8s.io/utils/ptr"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// operatorRuns records that TestThroughTheOperator started an operator.
var operatorRuns atomic.Bool

// TestThroughTheOperator runs the controller as the operator registers it
// (operator.New: its cache narrowing, its knobs, the metrics on): a
// RayCluster gets its Pods and shows up in the RayCluster metrics.
func TestThroughTheOperator(t *testing.T) {
	// operator.New registers controller names, which controller-runtime
	// allows once per process: with -count > 1 only the first run can go.
	if !operatorRuns.CompareAndSwap(false, true) {
		t.Skip("operator.New already ran in this process")
	}
	env := testenv.Shared(t)
	ns := env.Namespace(t)
	cfg := configv1alpha1.Configuration{
		MetricsAddr: "0", ProbeAddr: "0", EnableMetrics: true, EnableLeaderElection: ptr.To(false), WatchNamespace: ns,
	}
	configv1alpha1.SetDefaults(&cfg)
	mgr, err := operator.New(operator.Settings{Config: cfg, Knobs: configv1alpha1.DefaultKnobs(), Features: features.NewGate()}, env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	w := &world{t: t, env: env, c: env.Client, ns: ns}
	w.create(w.newCluster("via-operator", group("small", 2)))
	w.waitPods("via-operator", nil, 3)
	w.eventually("kuberay_cluster_info for the cluster", func() (bool, error) {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			return false, err
		}
		for _, f := range families {
			if f.GetName() != "kuberay_cluster_info" {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["name"] == "via-operator" && labels["namespace"] == ns && labels["owner_kind"] == "None" {
					return true, nil
				}
			}
		}
		return false, nil
	})
}
