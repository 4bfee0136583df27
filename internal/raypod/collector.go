package raypod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// The history server collector (feature gate RayClusterHistoryServer,
// spec.historyServerOptions.collectorOptions): a sidecar in every Ray Pod
// that receives the Ray events the Ray container exports to it and reads
// the Ray logs from a /tmp/ray volume they share. KubeRay's names and values.
const (
	// CollectorContainerName is the sidecar's name.
	CollectorContainerName = "ray-history-collector"
	// collectorEventsPort is where the collector receives Ray events.
	collectorEventsPort = "8084"
	// collectorDashboardAddress is the head's own dashboard, which the head's
	// collector queries.
	collectorDashboardAddress = "http://localhost:8265"
	// collectorEventsExportAddr is where the Ray container sends its events.
	collectorEventsExportAddr = "http://localhost:8084/v1/events"
	// collectorEventTypes are the Ray event types the Ray container exposes.
	collectorEventTypes = "TASK_DEFINITION_EVENT,TASK_LIFECYCLE_EVENT,ACTOR_TASK_DEFINITION_EVENT,TASK_PROFILE_EVENT," +
		"DRIVER_JOB_DEFINITION_EVENT,DRIVER_JOB_LIFECYCLE_EVENT,ACTOR_DEFINITION_EVENT,ACTOR_LIFECYCLE_EVENT," +
		"NODE_DEFINITION_EVENT,NODE_LIFECYCLE_EVENT"
)

// Environment variables of the collector and the Ray event export.
const (
	EnvPodIP                        = "POD_IP"
	EnvRayRole                      = "RAY_ROLE"
	EnvEventsPort                   = "EVENTS_PORT"
	EnvOwnerKind                    = "OWNER_KIND"
	EnvOwnerName                    = "OWNER_NAME"
	EnvRayDashboardAddress          = "RAY_DASHBOARD_ADDRESS"
	EnvEnableRayEvent               = "RAY_enable_ray_event"
	EnvCoreWorkerEventsToAggregator = "RAY_enable_core_worker_ray_event_to_aggregator"
	EnvAggregatorEventsExportAddr   = "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR"
	EnvAggregatorExposableEvents    = "RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES"
	EnvAggregatorPublisherEvents    = "RAY_DASHBOARD_AGGREGATOR_AGENT_PUBLISHER_HTTP_ENDPOINT_EXPOSABLE_EVENT_TYPES"
)

// collectorOptions returns the cluster's collector settings when the gate
// is on and the spec asks for a collector, else nil.
func (b *podBuild) collectorOptions() *rayv1.CollectorOptions {
	h := b.cluster.Spec.HistoryServerOptions
	if !b.opts.HistoryServer || h == nil {
		return nil
	}
	return h.CollectorOptions
}

// addCollector appends the collector sidecar, with the token auth
// environment when auth is on (it queries the dashboard).
func (b *podBuild) addCollector() {
	o := b.collectorOptions()
	if o == nil {
		return
	}
	c := collectorContainer(o, b.nodeType, b.cluster, b.fqdn)
	if rayv1.IsAuthEnabled(&b.cluster.Spec) {
		b.setTokenAuthEnv(&c)
	}
	b.pod.Spec.Containers = append(b.pod.Spec.Containers, c)
}

// collectorContainer is KubeRay's BuildCollectorContainer: the image and
// pull policy (IfNotPresent) and resources (50m/64Mi requests, 200m/256Mi
// limits) of the options, the Pod IP, cluster, role and events port, the
// head address, the owner from the cluster's originated-from labels, the
// head's dashboard (on the head, unless the options set it), then the
// options' own env.
func collectorContainer(o *rayv1.CollectorOptions, nodeType rayv1.RayNodeType, cluster *rayv1.RayCluster, fqdn string) corev1.Container {
	c := corev1.Container{
		Name:            CollectorContainerName,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	}
	if o.Image != nil {
		c.Image = *o.Image
	}
	if o.ImagePullPolicy != nil {
		c.ImagePullPolicy = *o.ImagePullPolicy
	}
	if o.Resources != nil {
		c.Resources = *o.Resources
	}
	role := "Worker"
	if nodeType == rayv1.HeadNode {
		role = "Head"
	}
	c.Env = []corev1.EnvVar{
		fieldEnv(EnvPodIP, "status.podIP"),
		{Name: EnvRayClusterName, Value: cluster.Name},
		{Name: EnvRayClusterNamespace, Value: cluster.Namespace},
		{Name: EnvRayRole, Value: role},
		{Name: EnvEventsPort, Value: collectorEventsPort},
	}
	if fqdn != "" {
		c.Env = append(c.Env, corev1.EnvVar{Name: EnvFQRayIP, Value: fqdn})
	}
	if v := cluster.Labels[rayv1.LabelOriginatedFromCRD]; v != "" {
		c.Env = append(c.Env, corev1.EnvVar{Name: EnvOwnerKind, Value: v})
	}
	if v := cluster.Labels[rayv1.LabelOriginatedFromCRName]; v != "" {
		c.Env = append(c.Env, corev1.EnvVar{Name: EnvOwnerName, Value: v})
	}
	if nodeType == rayv1.HeadNode && !hasEnv(o.Env, EnvRayDashboardAddress) {
		c.Env = append(c.Env, corev1.EnvVar{Name: EnvRayDashboardAddress, Value: collectorDashboardAddress})
	}
	c.Env = append(c.Env, o.Env...)
	return c
}

// collectorIndex is the index of the collector container, -1 when the gate
// is off or the Pod has none. Like KubeRay, it goes by the container name.
func (b *podBuild) collectorIndex() int {
	if !b.opts.HistoryServer {
		return -1
	}
	return containerIndex(b.pod.Spec.Containers, CollectorContainerName)
}

// shareLogsWithCollector mounts an emptyDir at /tmp/ray in the Ray container
// and the collector, so that the collector reads the Ray logs.
func (b *podBuild) shareLogsWithCollector() {
	i := b.collectorIndex()
	if i < 0 {
		return
	}
	b.addEmptyDir(b.rayContainer(), RayLogsVolumeName, RayLogsMountPath, corev1.StorageMediumDefault)
	b.addEmptyDir(&b.pod.Spec.Containers[i], RayLogsVolumeName, RayLogsMountPath, corev1.StorageMediumDefault)
}

// setEventExportEnv makes the Ray container export its events to the
// collector; variables the user sets win.
func (b *podBuild) setEventExportEnv() {
	if b.collectorIndex() < 0 {
		return
	}
	addEnvIfMissing(b.rayContainer(),
		corev1.EnvVar{Name: EnvEnableRayEvent, Value: "true"},
		corev1.EnvVar{Name: EnvCoreWorkerEventsToAggregator, Value: "true"},
		corev1.EnvVar{Name: EnvAggregatorEventsExportAddr, Value: collectorEventsExportAddr},
		corev1.EnvVar{Name: EnvAggregatorExposableEvents, Value: collectorEventTypes},
		corev1.EnvVar{Name: EnvAggregatorPublisherEvents, Value: collectorEventTypes},
	)
}
