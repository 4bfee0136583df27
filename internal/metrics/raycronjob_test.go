package metrics

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestRayCronJobMetrics(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		wrappers.MakeRayCronJob("a", "ns1").Schedule("@hourly").Obj(),
		wrappers.MakeRayCronJob("b", "ns2").Schedule("30 2 * * *").TimeZone("Europe/Berlin").ConcurrencyPolicy(rayv1.ForbidConcurrent).Obj(),
	).Build()
	m := NewRayCronJobMetrics(reader, logr.Discard())
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	m.ObserveRayJobCreation("a", "ns1", "created")
	m.ObserveRayJobCreation("a", "ns1", "created")
	m.ObserveRayJobCreation("a", "ns1", "already_exists")
	m.ObserveRayJobCreation("b", "ns2", "failed")
	m.ObserveRayJobCreation("gone", "ns1", "created")
	m.DeleteRayCronJobMetrics("gone", "ns1")

	want := `
# HELP kuberay_cronjob_info Metadata information about RayCronJob custom resources
# TYPE kuberay_cronjob_info gauge
kuberay_cronjob_info{concurrency_policy="Allow",name="a",namespace="ns1",schedule="@hourly",time_zone=""} 1
kuberay_cronjob_info{concurrency_policy="Forbid",name="b",namespace="ns2",schedule="30 2 * * *",time_zone="Europe/Berlin"} 1
# HELP kuberay_cronjob_rayjob_creations_total RayJobs a RayCronJob's schedule tried to create, by outcome: created, already_exists (created before, e.g. by an earlier operator) or failed.
# TYPE kuberay_cronjob_rayjob_creations_total counter
kuberay_cronjob_rayjob_creations_total{name="a",namespace="ns1",outcome="already_exists"} 1
kuberay_cronjob_rayjob_creations_total{name="a",namespace="ns1",outcome="created"} 2
kuberay_cronjob_rayjob_creations_total{name="b",namespace="ns2",outcome="failed"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kuberay_cronjob_info", "kuberay_cronjob_rayjob_creations_total"); err != nil {
		t.Error(err)
	}
}
