// Package metrics holds the operator's own Prometheus metrics, with KubeRay's
// names and labels so that existing dashboards and alerts keep working.
// Collectors are registered with controller-runtime's registry, which the
// manager serves on its metrics endpoint.
package metrics

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// ownerKindNone is the owner_kind of a RayCluster created directly by a user.
const ownerKindNone = "None"

// RayCluster collects the RayCluster metrics:
//
//   - kuberay_cluster_provisioned_duration_seconds{name,namespace}: seconds
//     from creation until RayClusterProvisioned first turned true;
//   - kuberay_cluster_info{name,namespace,owner_kind}: always 1;
//   - kuberay_cluster_condition_provisioned{name,namespace,condition}: 1,
//     with condition "true" or "false";
//
// and, not KubeRay's, ray_operator_cluster_idle_terminations_total
// {namespace,policy}: the RayClusters spec.idleTerminationOptions ended;
// ray_operator_cluster_rolling_update_batches_total{namespace} and
// ray_operator_cluster_rolling_update_pods_replaced_total{namespace}: the
// batches of upgradeStrategy RollingUpdate and the out-of-date worker Pods
// they deleted.
//
// The last two are computed from the RayClusters in the cache at scrape time,
// so deleted clusters disappear without bookkeeping.
type RayCluster struct {
	provisionedDuration  *prometheus.GaugeVec
	info                 *prometheus.Desc
	conditionProvisioned *prometheus.Desc
	idleTerminations     *prometheus.CounterVec
	rollingBatches       *prometheus.CounterVec
	rollingReplaced      *prometheus.CounterVec
	reader               client.Reader
	log                  logr.Logger
}

var _ prometheus.Collector = (*RayCluster)(nil)

// NewRayCluster returns a collector that lists RayClusters through reader.
func NewRayCluster(reader client.Reader, log logr.Logger) *RayCluster {
	return &RayCluster{
		provisionedDuration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kuberay_cluster_provisioned_duration_seconds",
			Help: "The time, in seconds, when a RayCluster's `RayClusterProvisioned` status transitions from false (or unset) to true",
		}, []string{"name", "namespace"}),
		info: prometheus.NewDesc("kuberay_cluster_info",
			"Metadata information about RayCluster custom resources",
			[]string{"name", "namespace", "owner_kind"}, nil),
		conditionProvisioned: prometheus.NewDesc("kuberay_cluster_condition_provisioned",
			"Indicates whether the RayCluster is provisioned",
			[]string{"name", "namespace", "condition"}, nil),
		idleTerminations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ray_operator_cluster_idle_terminations_total",
			Help: "RayClusters suspended or deleted because they stayed idle past spec.idleTerminationOptions.timeoutSeconds",
		}, []string{"namespace", "policy"}),
		rollingBatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ray_operator_cluster_rolling_update_batches_total",
			Help: "Batches of worker Pod replacements made by upgradeStrategy RollingUpdate",
		}, []string{"namespace"}),
		rollingReplaced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ray_operator_cluster_rolling_update_pods_replaced_total",
			Help: "Out-of-date worker Pods deleted by upgradeStrategy RollingUpdate to be replaced",
		}, []string{"namespace"}),
		reader: reader,
		log:    log,
	}
}

// Register adds c to controller-runtime's registry. A collector registered
// before (by an earlier manager in the same process) is replaced.
func (c *RayCluster) Register() error {
	return registerReplacing(ctrlmetrics.Registry, c)
}

// registerReplacing registers col, first unregistering an equal collector.
func registerReplacing(reg prometheus.Registerer, col prometheus.Collector) error {
	err := reg.Register(col)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		reg.Unregister(already.ExistingCollector)
		return reg.Register(col)
	}
	return err
}

// Describe implements prometheus.Collector.
func (c *RayCluster) Describe(ch chan<- *prometheus.Desc) {
	c.provisionedDuration.Describe(ch)
	c.idleTerminations.Describe(ch)
	c.rollingBatches.Describe(ch)
	c.rollingReplaced.Describe(ch)
	ch <- c.info
	ch <- c.conditionProvisioned
}

// Collect implements prometheus.Collector.
func (c *RayCluster) Collect(ch chan<- prometheus.Metric) {
	c.provisionedDuration.Collect(ch)
	c.idleTerminations.Collect(ch)
	c.rollingBatches.Collect(ch)
	c.rollingReplaced.Collect(ch)
	var clusters rayv1.RayClusterList
	if err := c.reader.List(context.Background(), &clusters); err != nil {
		c.log.Error(err, "Listing RayClusters for metrics")
		return
	}
	for i := range clusters.Items {
		rc := &clusters.Items[i]
		ownerKind := ownerKindNone
		if kind, ok := rc.Labels[rayv1.LabelOriginatedFromCRD]; ok {
			ownerKind = kind
		}
		ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, rc.Name, rc.Namespace, ownerKind)
		provisioned := meta.IsStatusConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterProvisioned))
		ch <- prometheus.MustNewConstMetric(c.conditionProvisioned, prometheus.GaugeValue, 1,
			rc.Name, rc.Namespace, strconv.FormatBool(provisioned))
	}
}

// ObserveProvisioned records how long a cluster took to be provisioned.
func (c *RayCluster) ObserveProvisioned(name, namespace string, d time.Duration) {
	c.provisionedDuration.WithLabelValues(name, namespace).Set(d.Seconds())
}

// Forget drops the series of a deleted cluster.
func (c *RayCluster) Forget(name, namespace string) {
	c.provisionedDuration.Delete(prometheus.Labels{"name": name, "namespace": namespace})
}

// ObserveIdleEnded counts a cluster ended by its idle termination policy.
func (c *RayCluster) ObserveIdleEnded(_, namespace, policy string) {
	c.idleTerminations.WithLabelValues(namespace, policy).Inc()
}

// ObserveRollingUpdateBatch counts a batch of a rolling worker group update
// and the out-of-date Pods it deleted.
func (c *RayCluster) ObserveRollingUpdateBatch(namespace string, replaced int) {
	c.rollingBatches.WithLabelValues(namespace).Inc()
	c.rollingReplaced.WithLabelValues(namespace).Add(float64(replaced))
}
