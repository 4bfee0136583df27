package metrics

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestRayJobMetrics(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns1"},
			Status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}},
		&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns2"},
			Status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusFailed, ExecutionAttempt: ptr.To[int32](2)}},
	).Build()
	m := NewRayJobMetrics(reader, logr.Discard())
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	m.ObserveRayJobExecutionDuration("a", "ns1", rayv1.JobDeploymentStatusRetrying, 1, 12)
	m.ObserveRayJobExecutionDuration("b", "ns2", rayv1.JobDeploymentStatusFailed, 0, 5)
	m.DeleteRayJobMetrics("b", "ns2")

	want := `
# HELP kuberay_job_deployment_status The RayJob's current deployment status
# TYPE kuberay_job_deployment_status gauge
kuberay_job_deployment_status{deployment_status="Failed",name="b",namespace="ns2"} 1
kuberay_job_deployment_status{deployment_status="Running",name="a",namespace="ns1"} 1
# HELP kuberay_job_info Metadata information about RayJob custom resources
# TYPE kuberay_job_info gauge
kuberay_job_info{name="a",namespace="ns1"} 1
kuberay_job_info{name="b",namespace="ns2"} 1
# HELP ray_operator_job_execution_attempt The number of the RayJob's current execution attempt, from 1 (RayJobs with spec.retryStrategy BlockingRecreate)
# TYPE ray_operator_job_execution_attempt gauge
ray_operator_job_execution_attempt{name="b",namespace="ns2"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kuberay_job_info", "kuberay_job_deployment_status", "ray_operator_job_execution_attempt"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.executionDuration.WithLabelValues("a", "ns1", "Retrying", "1")); got != 12 {
		t.Errorf("execution duration %v, want 12", got)
	}
	if n := testutil.CollectAndCount(m.executionDuration); n != 1 {
		t.Errorf("%d execution duration series after deleting b, want 1", n)
	}
}
