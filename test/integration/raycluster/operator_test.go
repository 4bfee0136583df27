package raycluster_test

import (
	"context"
	"fmt"
	"maps"
	"os"
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
	w.create(cluster)
	w.waitPods("with-auth", nil, 2)
	secret := &corev1.Secret{}
	if err := w.c.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: "with-auth"}, secret); err != nil {
		w.t.Fatalf("auth Secret: %v", err)
	}
	if want := map[string]string{rayv1.LabelCluster: "with-auth"}; !maps.Equal(secret.Labels, want) {
		w.t.Errorf("auth Secret labels = %v, want %v", secret.Labels, want)
	}
	w.edit("with-auth", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2) })
	w.waitPods("with-auth", nil, 3)
	events := &corev1.EventList{}
	if err := w.c.List(w.t.Context(), events, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == "with-auth" && e.Reason == "FailedToCreateSecret" {
			w.t.Errorf("event %s: %s", e.Reason, e.Message)
		}
	}
	if err := w.c.Delete(w.t.Context(), secret); err != nil {
		w.t.Fatal(err)
	}
	w.eventually("a new auth Secret after the old one was deleted", func() (bool, error) {
		again := &corev1.Secret{}
		err := w.c.Get(w.t.Context(), client.ObjectKeyFromObject(secret), again)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && again.UID != secret.UID, err
	})
}
