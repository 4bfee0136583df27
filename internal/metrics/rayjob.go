package metrics

import (
	"context"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// RayJobMetrics exports KubeRay's RayJob metrics:
//
//   - kuberay_job_execution_duration_seconds (gauge, set by the controller
//     when an attempt ends: Complete, Failed or Retrying);
//   - kuberay_job_info and kuberay_job_deployment_status (gauges of value 1,
//     computed from the RayJobs in the cache at every scrape, so they never
//     go stale);
//
// and, not KubeRay's, ray_operator_job_execution_attempt: the
// status.executionAttempt of RayJobs with retryStrategy BlockingRecreate,
// computed the same way.
//
// Register it with a prometheus.Registerer (controller-runtime's
// metrics.Registry in the operator).
type RayJobMetrics struct {
	reader            client.Reader
	log               logr.Logger
	executionDuration *prometheus.GaugeVec
	info              *prometheus.Desc
	deploymentStatus  *prometheus.Desc
	executionAttempt  *prometheus.Desc
}

var _ prometheus.Collector = (*RayJobMetrics)(nil)

// NewRayJobMetrics returns the RayJob collector; reader lists RayJobs at
// scrape time.
func NewRayJobMetrics(reader client.Reader, log logr.Logger) *RayJobMetrics {
	return &RayJobMetrics{
		reader: reader,
		log:    log,
		executionDuration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kuberay_job_execution_duration_seconds",
			Help: "Duration from when the RayJob CR's JobDeploymentStatus transitions from Initializing to either the Retrying state or a terminal state, such as Complete or Failed. The Retrying state indicates that the CR previously failed and that spec.backoffLimit is enabled.",
		}, []string{"name", "namespace", "job_deployment_status", "retry_count"}),
		info: prometheus.NewDesc("kuberay_job_info",
			"Metadata information about RayJob custom resources", []string{"name", "namespace"}, nil),
		deploymentStatus: prometheus.NewDesc("kuberay_job_deployment_status",
			"The RayJob's current deployment status", []string{"name", "namespace", "deployment_status"}, nil),
		executionAttempt: prometheus.NewDesc("ray_operator_job_execution_attempt",
			"The number of the RayJob's current execution attempt, from 1 (RayJobs with spec.retryStrategy BlockingRecreate)",
			[]string{"name", "namespace"}, nil),
	}
}

// Register adds m to controller-runtime's registry, which the manager's
// metrics endpoint serves. A collector registered before (by an earlier
// manager in the same process) is replaced.
func (m *RayJobMetrics) Register() error {
	return registerReplacing(ctrlmetrics.Registry, m)
}

// Describe implements prometheus.Collector.
func (m *RayJobMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.executionDuration.Describe(ch)
	ch <- m.info
	ch <- m.deploymentStatus
	ch <- m.executionAttempt
}

// Collect implements prometheus.Collector.
func (m *RayJobMetrics) Collect(ch chan<- prometheus.Metric) {
	m.executionDuration.Collect(ch)
	var jobs rayv1.RayJobList
	if err := m.reader.List(context.Background(), &jobs); err != nil {
		m.log.Error(err, "Failed to list RayJobs for metrics")
		return
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		ch <- prometheus.MustNewConstMetric(m.info, prometheus.GaugeValue, 1, job.Name, job.Namespace)
		ch <- prometheus.MustNewConstMetric(m.deploymentStatus, prometheus.GaugeValue, 1,
			job.Name, job.Namespace, string(job.Status.JobDeploymentStatus))
		if a := job.Status.ExecutionAttempt; a != nil {
			ch <- prometheus.MustNewConstMetric(m.executionAttempt, prometheus.GaugeValue, float64(*a), job.Name, job.Namespace)
		}
	}
}

// ObserveRayJobExecutionDuration records how long an attempt of a RayJob ran
// until it reached status, after retryCount earlier failures.
func (m *RayJobMetrics) ObserveRayJobExecutionDuration(name, namespace string, status rayv1.JobDeploymentStatus, retryCount int, seconds float64) {
	m.executionDuration.WithLabelValues(name, namespace, string(status), strconv.Itoa(retryCount)).Set(seconds)
}

// DeleteRayJobMetrics forgets the execution durations of a deleted RayJob.
func (m *RayJobMetrics) DeleteRayJobMetrics(name, namespace string) {
	m.executionDuration.DeletePartialMatch(prometheus.Labels{"name": name, "namespace": namespace})
}
