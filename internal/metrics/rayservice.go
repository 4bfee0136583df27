package metrics

import (
	"context"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// RayServiceMetrics exports KubeRay's RayService metrics, gauges of value 1
// computed from the RayServices in the cache at every scrape (so they never
// go stale and need nothing from the controller):
//
//   - kuberay_service_info{name,namespace,uid};
//   - kuberay_service_condition_ready{name,namespace,uid,condition};
//   - kuberay_service_condition_upgrade_in_progress{name,namespace,uid,condition},
//
// where condition is "true" or "false" (absent conditions count as false),
// and, not KubeRay's, ray_operator_service_upgrades_abandoned{name,namespace}:
// the consecutive upgrades of the current spec abandoned after
// spec.upgradeStrategy.pendingClusterTimeoutSeconds (RayServices with that
// field only).
type RayServiceMetrics struct {
	reader            client.Reader
	log               logr.Logger
	info              *prometheus.Desc
	ready             *prometheus.Desc
	upgradeInProgress *prometheus.Desc
	upgradesAbandoned *prometheus.Desc
}

var _ prometheus.Collector = (*RayServiceMetrics)(nil)

// NewRayServiceMetrics returns the RayService collector; reader lists
// RayServices at scrape time.
func NewRayServiceMetrics(reader client.Reader, log logr.Logger) *RayServiceMetrics {
	labels := []string{"name", "namespace", "uid"}
	withCondition := append(append([]string{}, labels...), "condition")
	return &RayServiceMetrics{
		reader: reader,
		log:    log,
		info:   prometheus.NewDesc("kuberay_service_info", "Metadata information about RayService custom resources", labels, nil),
		ready: prometheus.NewDesc("kuberay_service_condition_ready",
			"Describes whether the RayService is ready. Ready means users can send requests to the underlying cluster and the number of serve endpoints is greater than 0.", withCondition, nil),
		upgradeInProgress: prometheus.NewDesc("kuberay_service_condition_upgrade_in_progress",
			"Describes whether the RayService is performing a zero-downtime upgrade.", withCondition, nil),
		upgradesAbandoned: prometheus.NewDesc("ray_operator_service_upgrades_abandoned",
			"Consecutive upgrades of the RayService's last abandoned spec whose pending cluster was deleted after spec.upgradeStrategy.pendingClusterTimeoutSeconds (RayServices with that field only)",
			[]string{"name", "namespace"}, nil),
	}
}

// Register adds m to controller-runtime's registry, replacing a collector
// an earlier manager in the same process registered.
func (m *RayServiceMetrics) Register() error {
	return registerReplacing(ctrlmetrics.Registry, m)
}

// Describe implements prometheus.Collector.
func (m *RayServiceMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.info
	ch <- m.ready
	ch <- m.upgradeInProgress
	ch <- m.upgradesAbandoned
}

// Collect implements prometheus.Collector.
func (m *RayServiceMetrics) Collect(ch chan<- prometheus.Metric) {
	var services rayv1.RayServiceList
	if err := m.reader.List(context.Background(), &services); err != nil {
		m.log.Error(err, "Failed to list RayServices for metrics")
		return
	}
	for i := range services.Items {
		rs := &services.Items[i]
		uid := string(rs.UID)
		ch <- prometheus.MustNewConstMetric(m.info, prometheus.GaugeValue, 1, rs.Name, rs.Namespace, uid)
		ch <- prometheus.MustNewConstMetric(m.ready, prometheus.GaugeValue, 1, rs.Name, rs.Namespace, uid,
			strconv.FormatBool(meta.IsStatusConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceReady))))
		ch <- prometheus.MustNewConstMetric(m.upgradeInProgress, prometheus.GaugeValue, 1, rs.Name, rs.Namespace, uid,
			strconv.FormatBool(meta.IsStatusConditionTrue(rs.Status.Conditions, string(rayv1.UpgradeInProgress))))
		if att := rs.Status.UpgradeAttempt; att != nil {
			ch <- prometheus.MustNewConstMetric(m.upgradesAbandoned, prometheus.GaugeValue, float64(att.Abandoned), rs.Name, rs.Namespace)
		}
	}
}
