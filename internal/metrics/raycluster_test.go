package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestRayClusterCollector(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	provisioned := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
		Status: rayv1.RayClusterStatus{Conditions: []metav1.Condition{{
			Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue,
		}}},
	}
	fromJob := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{
		Name: "b", Namespace: "ns", Labels: map[string]string{rayv1.LabelOriginatedFromCRD: "RayJob"},
	}}
	c := NewRayCluster(fake.NewClientBuilder().WithScheme(scheme).WithObjects(provisioned, fromJob).Build(), logr.Discard())
	c.ObserveProvisioned("a", "ns", 90*time.Second)
	c.ObserveProvisioned("gone", "ns", time.Second)
	c.Forget("gone", "ns")

	reg := prometheus.NewPedanticRegistry()
	if err := registerReplacing(reg, c); err != nil {
		t.Fatal(err)
	}
	// A second collector (a restarted manager) replaces the first.
	if err := registerReplacing(reg, c); err != nil {
		t.Fatalf("registering again: %v", err)
	}
	want := `
# HELP kuberay_cluster_condition_provisioned Indicates whether the RayCluster is provisioned
# TYPE kuberay_cluster_condition_provisioned gauge
kuberay_cluster_condition_provisioned{condition="false",name="b",namespace="ns"} 1
kuberay_cluster_condition_provisioned{condition="true",name="a",namespace="ns"} 1
# HELP kuberay_cluster_info Metadata information about RayCluster custom resources
# TYPE kuberay_cluster_info gauge
kuberay_cluster_info{name="a",namespace="ns",owner_kind="None"} 1
kuberay_cluster_info{name="b",namespace="ns",owner_kind="RayJob"} 1
# HELP kuberay_cluster_provisioned_duration_seconds The time, in seconds, when a RayCluster's ` + "`RayClusterProvisioned`" + ` status transitions from false (or unset) to true
# TYPE kuberay_cluster_provisioned_duration_seconds gauge
kuberay_cluster_provisioned_duration_seconds{name="a",namespace="ns"} 90
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestRayClusterIdleTerminations(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := NewRayCluster(fake.NewClientBuilder().WithScheme(scheme).Build(), logr.Discard())
	c.ObserveIdleEnded("a", "ns", "Suspend")
	c.ObserveIdleEnded("b", "ns", "Suspend")
	c.ObserveIdleEnded("c", "other", "Delete")
	want := `
# HELP ray_operator_cluster_idle_terminations_total RayClusters suspended or deleted because they stayed idle past spec.idleTerminationOptions.timeoutSeconds
# TYPE ray_operator_cluster_idle_terminations_total counter
ray_operator_cluster_idle_terminations_total{namespace="ns",policy="Suspend"} 2
ray_operator_cluster_idle_terminations_total{namespace="other",policy="Delete"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "ray_operator_cluster_idle_terminations_total"); err != nil {
		t.Fatal(err)
	}
}

func TestRayClusterRollingUpdateBatches(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := NewRayCluster(fake.NewClientBuilder().WithScheme(scheme).Build(), logr.Discard())
	c.ObserveRollingUpdateBatch("ns", 2)
	c.ObserveRollingUpdateBatch("ns", 0)
	c.ObserveRollingUpdateBatch("other", 1)
	want := `
# HELP ray_operator_cluster_rolling_update_batches_total Batches of worker Pod replacements made by upgradeStrategy RollingUpdate
# TYPE ray_operator_cluster_rolling_update_batches_total counter
ray_operator_cluster_rolling_update_batches_total{namespace="ns"} 2
ray_operator_cluster_rolling_update_batches_total{namespace="other"} 1
# HELP ray_operator_cluster_rolling_update_pods_replaced_total Out-of-date worker Pods deleted by upgradeStrategy RollingUpdate to be replaced
# TYPE ray_operator_cluster_rolling_update_pods_replaced_total counter
ray_operator_cluster_rolling_update_pods_replaced_total{namespace="ns"} 2
ray_operator_cluster_rolling_update_pods_replaced_total{namespace="other"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"ray_operator_cluster_rolling_update_batches_total", "ray_operator_cluster_rolling_update_pods_replaced_total"); err != nil {
		t.Fatal(err)
	}
}
