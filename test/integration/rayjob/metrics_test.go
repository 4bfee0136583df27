package rayjob_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// TestOperatorWiresRayJobMetrics: the RayJob controller as the operator
// registers it (operator.DefaultControllers) with --enable-metrics puts its
// collector in controller-runtime's registry, which the metrics endpoint
// serves, and records the execution duration of an attempt into it.
func TestOperatorWiresRayJobMetrics(t *testing.T) {
	w := emptyWorld(t)
	startOperatorRayJob(w, configv1alpha1.Configuration{EnableMetrics: true, ReconcileConcurrency: 1})

	w.Create(rayJob("metered", rayv1.K8sJobMode, func(j *rayv1.RayJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int32](5) }))
	w.WaitRayJob("metered", rayv1.JobDeploymentStatusInitializing)
	w.clock.Step(6 * time.Second)
	w.WaitRayJob("metered", rayv1.JobDeploymentStatusFailed)

	labels := map[string]string{"name": "metered", "namespace": w.NS}
	w.Eventually("the RayJob metrics in the registry", func() (bool, error) {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			return false, err
		}
		for _, want := range []struct {
			family string
			labels map[string]string
		}{
			{"kuberay_job_info", labels},
			{"kuberay_job_deployment_status", with(labels, "deployment_status", "Failed")},
			{"kuberay_job_execution_duration_seconds", with(labels, "job_deployment_status", "Failed")},
		} {
			if !hasSeries(families, want.family, want.labels) {
				return false, fmt.Errorf("no %s series with %v", want.family, want.labels)
			}
		}
		return true, nil
	})
}

// startOperatorRayJob runs, for w's namespace, the RayJob controller set up
// exactly as the operator sets it up, with cfg.
func startOperatorRayJob(w *world, cfg configv1alpha1.Configuration) {
	w.T.Helper()
	deps := operator.Deps{
		Config:   cfg,
		Knobs:    configv1alpha1.Knobs{RayJobDeploymentStatusTransitionGrace: 300 * time.Second, ClusterDomain: "cluster.local"},
		Features: features.NewGate(),
		Clock:    w.clock,
	}
	cacheOpts := cache.Options{DefaultNamespaces: map[string]cache.Config{w.NS: {}}}
	w.op = testenv.StartOperator(w.T, w.Env, cacheOpts, func(mgr manager.Manager) error {
		for _, c := range operator.DefaultControllers() {
			if c.Name == "RayJob" {
				return c.Setup(mgr, deps)
			}
		}
		return errors.New("the operator registers no RayJob controller")
	})
}

// with returns a copy of labels with one more label.
func with(labels map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// hasSeries reports whether the family has a series carrying all labels.
func hasSeries(families []*dto.MetricFamily, family string, labels map[string]string) bool {
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
			if matched == len(labels) {
				return true
			}
		}
	}
	return false
}
