package raycluster_test

import (
	"maps"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
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
	w := &world{World: testenv.NewWorld(t, testenv.Shared(t))}
	ns := w.NS
	cfg := configv1alpha1.Configuration{
		MetricsAddr: "0", ProbeAddr: "0", EnableMetrics: true, EnableLeaderElection: ptr.To(false), WatchNamespace: ns,
	}
	configv1alpha1.SetDefaults(&cfg)
	mgr, err := operator.New(operator.Settings{Config: cfg, Knobs: configv1alpha1.DefaultKnobs(), Features: features.NewGate()}, w.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	var run testenv.Runner
	run.Start(mgr)
	t.Cleanup(run.Stop)

	w.Create(w.newCluster("via-operator", group("small", 2)))
	w.WaitPods("via-operator", nil, 3)
	w.Eventually("kuberay_cluster_info for the cluster", func() (bool, error) {
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
	assertAuthSecretThroughCache(w)
}

// assertAuthSecretThroughCache: the auth Secret the operator generates
// carries only ray.io/cluster, as KubeRay's; with the operator's narrowed
// Secret cache a later pass (a scale-up) goes through with no
// FailedToCreateSecret event, and a deleted Secret is made again.
// (TestCacheOptions checks that the cache selector matches the Secret
// BuildAuthSecret makes: a mismatch costs a failed create per pass, which no
// object shows.)
func assertAuthSecretThroughCache(w *world) {
	cluster := w.newCluster("with-auth", group("small", 1))
	cluster.Spec.RayVersion = "2.52.0"
	cluster.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
	w.Create(cluster)
	w.WaitPods("with-auth", nil, 2)
	secret := &corev1.Secret{}
	if err := w.Client.Get(w.T.Context(), client.ObjectKey{Namespace: w.NS, Name: "with-auth"}, secret); err != nil {
		w.T.Fatalf("auth Secret: %v", err)
	}
	if want := map[string]string{rayv1.LabelCluster: "with-auth"}; !maps.Equal(secret.Labels, want) {
		w.T.Errorf("auth Secret labels = %v, want %v", secret.Labels, want)
	}
	w.edit("with-auth", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2) })
	w.WaitPods("with-auth", nil, 3)
	for _, e := range w.Events("with-auth", "FailedToCreateSecret") {
		w.T.Errorf("event %s: %s", e.Reason, e.Note)
	}
	if err := w.Client.Delete(w.T.Context(), secret); err != nil {
		w.T.Fatal(err)
	}
	w.Eventually("a new auth Secret after the old one was deleted", func() (bool, error) {
		again := &corev1.Secret{}
		err := w.Client.Get(w.T.Context(), client.ObjectKeyFromObject(secret), again)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && again.UID != secret.UID, err
	})
}
