package metrics

import (
	"context"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// RayCronJobMetrics exports the RayCronJob metrics (KubeRay has none; the
// names follow its kuberay_<kind>_* scheme):
//
//   - kuberay_cronjob_info{name,namespace,schedule,time_zone,concurrency_policy}
//     (gauge of value 1, computed from the RayCronJobs in the cache at every
//     scrape, so it never goes stale; time_zone is empty when unset and
//     concurrency_policy is Allow when unset);
//   - kuberay_cronjob_rayjob_creations_total{name,namespace,outcome}
//     (counter of the RayJobs the controller tried to create, by outcome:
//     created, already_exists or failed).
//
// Register it with Register (controller-runtime's registry).
type RayCronJobMetrics struct {
	reader    client.Reader
	log       logr.Logger
	info      *prometheus.Desc
	creations *prometheus.CounterVec
}

var _ prometheus.Collector = (*RayCronJobMetrics)(nil)

// NewRayCronJobMetrics returns the RayCronJob collector; reader lists
// RayCronJobs at scrape time.
func NewRayCronJobMetrics(reader client.Reader, log logr.Logger) *RayCronJobMetrics {
	return &RayCronJobMetrics{
		reader: reader,
		log:    log,
		info: prometheus.NewDesc("kuberay_cronjob_info", "Metadata information about RayCronJob custom resources",
			[]string{"name", "namespace", "schedule", "time_zone", "concurrency_policy"}, nil),
		creations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kuberay_cronjob_rayjob_creations_total",
			Help: "RayJobs a RayCronJob's schedule tried to create, by outcome: created, already_exists (created before, e.g. by an earlier operator) or failed.",
		}, []string{"name", "namespace", "outcome"}),
	}
}

// Register adds m to controller-runtime's registry, replacing a collector
// an earlier manager in the same process registered.
func (m *RayCronJobMetrics) Register() error {
	return registerReplacing(ctrlmetrics.Registry, m)
}

// Describe implements prometheus.Collector.
func (m *RayCronJobMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.creations.Describe(ch)
	ch <- m.info
}

// Collect implements prometheus.Collector.
func (m *RayCronJobMetrics) Collect(ch chan<- prometheus.Metric) {
	m.creations.Collect(ch)
	var cronJobs rayv1.RayCronJobList
	if err := m.reader.List(context.Background(), &cronJobs); err != nil {
		m.log.Error(err, "Failed to list RayCronJobs for metrics")
		return
	}
	for i := range cronJobs.Items {
		cj := &cronJobs.Items[i]
		policy := cj.Spec.ConcurrencyPolicy
		if policy == "" {
			policy = rayv1.AllowConcurrent
		}
		ch <- prometheus.MustNewConstMetric(m.info, prometheus.GaugeValue, 1,
			cj.Name, cj.Namespace, cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""), string(policy))
	}
}

// ObserveRayJobCreation counts one attempt to create a RayJob of a
// RayCronJob.
func (m *RayCronJobMetrics) ObserveRayJobCreation(name, namespace, outcome string) {
	m.creations.WithLabelValues(name, namespace, outcome).Inc()
}

// DeleteRayCronJobMetrics forgets the counters of a deleted RayCronJob.
func (m *RayCronJobMetrics) DeleteRayCronJobMetrics(name, namespace string) {
	m.creations.DeletePartialMatch(prometheus.Labels{"name": name, "namespace": namespace})
}
