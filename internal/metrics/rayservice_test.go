package metrics

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestRayServiceMetrics(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cond := func(t rayv1.RayServiceConditionType, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: s, Reason: "r"}
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "ready", Namespace: "ns1", UID: "u1"},
			Status: rayv1.RayServiceStatuses{Conditions: []metav1.Condition{
				cond(rayv1.RayServiceReady, metav1.ConditionTrue), cond(rayv1.UpgradeInProgress, metav1.ConditionTrue)},
				UpgradeAttempt: &rayv1.UpgradeAttempt{Abandoned: 2}}},
		&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "ns2", UID: "u2"}},
	).Build()
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewRayServiceMetrics(reader, logr.Discard()))
	want := `
# HELP kuberay_service_condition_ready Describes whether the RayService is ready. Ready means users can send requests to the underlying cluster and the number of serve endpoints is greater than 0.
# TYPE kuberay_service_condition_ready gauge
kuberay_service_condition_ready{condition="false",name="new",namespace="ns2",uid="u2"} 1
kuberay_service_condition_ready{condition="true",name="ready",namespace="ns1",uid="u1"} 1
# HELP kuberay_service_condition_upgrade_in_progress Describes whether the RayService is performing a zero-downtime upgrade.
# TYPE kuberay_service_condition_upgrade_in_progress gauge
kuberay_service_condition_upgrade_in_progress{condition="false",name="new",namespace="ns2",uid="u2"} 1
kuberay_service_condition_upgrade_in_progress{condition="true",name="ready",namespace="ns1",uid="u1"} 1
# HELP kuberay_service_info Metadata information about RayService custom resources
# TYPE kuberay_service_info gauge
kuberay_service_info{name="new",namespace="ns2",uid="u2"} 1
kuberay_service_info{name="ready",namespace="ns1",uid="u1"} 1
# HELP ray_operator_service_upgrades_abandoned Consecutive upgrades of the RayService's last abandoned spec whose pending cluster was deleted after spec.upgradeStrategy.pendingClusterTimeoutSeconds (RayServices with that field only)
# TYPE ray_operator_service_upgrades_abandoned gauge
ray_operator_service_upgrades_abandoned{name="ready",namespace="ns1"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
