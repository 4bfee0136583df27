package raypod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

const eventTypes = "TASK_DEFINITION_EVENT,TASK_LIFECYCLE_EVENT,ACTOR_TASK_DEFINITION_EVENT,TASK_PROFILE_EVENT,DRIVER_JOB_DEFINITION_EVENT,DRIVER_JOB_LIFECYCLE_EVENT,ACTOR_DEFINITION_EVENT,ACTOR_LIFECYCLE_EVENT,NODE_DEFINITION_EVENT,NODE_LIFECYCLE_EVENT"

func withCollector(o *rayv1.CollectorOptions) func(*rayv1.RayCluster) {
	return func(c *rayv1.RayCluster) {
		c.Spec.HistoryServerOptions = &rayv1.HistoryServerOptions{CollectorOptions: o}
	}
}

func collectorOf(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == "ray-history-collector" {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

func podIPEnv() corev1.EnvVar {
	return corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}
}

// TestCollectorContainer restates KubeRay's BuildCollectorContainer: the
// image, IfNotPresent and 50m/64Mi-200m/256Mi unless the options say
// otherwise; POD_IP, cluster name and namespace, RAY_ROLE Head/Worker,
// EVENTS_PORT 8084, FQ_RAY_IP, OWNER_KIND/OWNER_NAME from the cluster's
// originated-from labels, RAY_DASHBOARD_ADDRESS on the head unless the
// options set it, then the options' env; the token env when auth is on.
func TestCollectorContainer(t *testing.T) {
	fqdn := corev1.EnvVar{Name: "FQ_RAY_IP", Value: "raycluster-head-svc.default.svc.cluster.local"}
	base := func(role string) []corev1.EnvVar {
		return []corev1.EnvVar{podIPEnv(), {Name: "RAY_CLUSTER_NAME", Value: "raycluster"}, {Name: "RAY_CLUSTER_NAMESPACE", Value: "default"},
			{Name: "RAY_ROLE", Value: role}, {Name: "EVENTS_PORT", Value: "8084"}, fqdn}
	}
	dashboard := corev1.EnvVar{Name: "RAY_DASHBOARD_ADDRESS", Value: "http://localhost:8265"}
	defaults := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	small := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	logs := []corev1.VolumeMount{{Name: "ray-logs", MountPath: "/tmp/ray"}}
	tests := map[string]struct {
		mutate     func(*rayv1.RayCluster)
		wantHead   corev1.Container
		wantWorker corev1.Container
	}{
		"defaults": {
			mutate:     withCollector(&rayv1.CollectorOptions{Image: ptr.To("collector:1")}),
			wantHead:   corev1.Container{Image: "collector:1", ImagePullPolicy: corev1.PullIfNotPresent, Resources: defaults, Env: append(base("Head"), dashboard)},
			wantWorker: corev1.Container{Image: "collector:1", ImagePullPolicy: corev1.PullIfNotPresent, Resources: defaults, Env: base("Worker")},
		},
		"options, owner labels, user dashboard address": {
			mutate: func(c *rayv1.RayCluster) {
				c.Labels = map[string]string{rayv1.LabelOriginatedFromCRD: "RayJob", rayv1.LabelOriginatedFromCRName: "job-1"}
				withCollector(&rayv1.CollectorOptions{
					Image: ptr.To("collector:2"), ImagePullPolicy: ptr.To(corev1.PullAlways), Resources: &small,
					Env: []corev1.EnvVar{{Name: "RAY_DASHBOARD_ADDRESS", Value: "http://elsewhere"}, {Name: "STORAGE_BACKEND", Value: "S3"}},
				})(c)
			},
			wantHead: corev1.Container{Image: "collector:2", ImagePullPolicy: corev1.PullAlways, Resources: small, Env: append(base("Head"),
				corev1.EnvVar{Name: "OWNER_KIND", Value: "RayJob"}, corev1.EnvVar{Name: "OWNER_NAME", Value: "job-1"},
				corev1.EnvVar{Name: "RAY_DASHBOARD_ADDRESS", Value: "http://elsewhere"}, corev1.EnvVar{Name: "STORAGE_BACKEND", Value: "S3"})},
			wantWorker: corev1.Container{Image: "collector:2", ImagePullPolicy: corev1.PullAlways, Resources: small, Env: append(base("Worker"),
				corev1.EnvVar{Name: "OWNER_KIND", Value: "RayJob"}, corev1.EnvVar{Name: "OWNER_NAME", Value: "job-1"},
				corev1.EnvVar{Name: "RAY_DASHBOARD_ADDRESS", Value: "http://elsewhere"}, corev1.EnvVar{Name: "STORAGE_BACKEND", Value: "S3"})},
		},
		"token auth": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
				withCollector(&rayv1.CollectorOptions{Image: ptr.To("collector:1")})(c)
			},
			wantHead:   corev1.Container{Image: "collector:1", ImagePullPolicy: corev1.PullIfNotPresent, Resources: defaults, Env: append(base("Head"), dashboard, authMode(), authToken())},
			wantWorker: corev1.Container{Image: "collector:1", ImagePullPolicy: corev1.PullIfNotPresent, Resources: defaults, Env: append(base("Worker"), authMode(), authToken())},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(tc.mutate)
			for role, pod := range map[string]*corev1.Pod{"head": buildHead(t, c, Options{HistoryServer: true}), "worker": buildWorker(t, c, WorkerIndex{}, Options{HistoryServer: true})} {
				want := tc.wantHead
				if role == "worker" {
					want = tc.wantWorker
				}
				want.Name, want.VolumeMounts = "ray-history-collector", logs
				got := collectorOf(pod)
				if got == nil {
					t.Fatalf("%s: no collector", role)
				}
				if diff := cmp.Diff(want, *got); diff != "" {
					t.Errorf("%s collector (-want +got):\n%s", role, diff)
				}
			}
		})
	}
}

func authMode() corev1.EnvVar { return corev1.EnvVar{Name: "RAY_AUTH_MODE", Value: "token"} }

func authToken() corev1.EnvVar {
	return corev1.EnvVar{Name: "RAY_AUTH_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "raycluster"}, Key: "auth_token",
	}}}
}

// TestCollectorPodWiring: with the gate and a collector, the Ray container
// shares /tmp/ray (emptyDir ray-logs) with the collector and ends its env
// with the event export variables (user values win); the collector comes
// before the operator's sidecars. Without the gate, or without
// collectorOptions, nothing of this happens.
func TestCollectorPodWiring(t *testing.T) {
	exportEnv := []corev1.EnvVar{
		{Name: "RAY_enable_ray_event", Value: "true"},
		{Name: "RAY_enable_core_worker_ray_event_to_aggregator", Value: "true"},
		{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR", Value: "http://localhost:8084/v1/events"},
		{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES", Value: eventTypes},
		{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_PUBLISHER_HTTP_ENDPOINT_EXPOSABLE_EVENT_TYPES", Value: eventTypes},
	}
	collector := withCollector(&rayv1.CollectorOptions{Image: ptr.To("collector:1")})
	sidecar := corev1.Container{Name: "fluentbit", Image: "fluent-bit"}
	tests := map[string]struct {
		mutate         func(*rayv1.RayCluster)
		opts           Options
		wantContainers []string
		wantExportEnv  []corev1.EnvVar
		wantLogMounts  int
		wantLogVolumes int
	}{
		"gate off":            {mutate: collector, wantContainers: []string{"ray", "fluentbit"}},
		"no collectorOptions": {mutate: withCollector(nil), opts: Options{HistoryServer: true}, wantContainers: []string{"ray", "fluentbit"}},
		"on": {
			mutate: collector, opts: Options{HistoryServer: true},
			wantContainers: []string{"ray", "ray-history-collector", "fluentbit"}, wantExportEnv: exportEnv, wantLogMounts: 1, wantLogVolumes: 1,
		},
		"user export address wins": {
			mutate: func(c *rayv1.RayCluster) {
				collector(c)
				for _, rc := range []*corev1.Container{headContainer(c), workerContainer(c)} {
					rc.Env = []corev1.EnvVar{{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR", Value: "http://mine"}}
				}
			},
			opts:           Options{HistoryServer: true},
			wantContainers: []string{"ray", "ray-history-collector", "fluentbit"},
			wantExportEnv:  []corev1.EnvVar{{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR", Value: "http://mine"}, exportEnv[0], exportEnv[1], exportEnv[3], exportEnv[4]},
			wantLogMounts:  1,
			wantLogVolumes: 1,
		},
		// KubeRay then keeps the user's mount on the Ray container, and the
		// collector gets its own ray-logs emptyDir.
		"the Ray container mounts /tmp/ray itself": {
			mutate: func(c *rayv1.RayCluster) {
				collector(c)
				for _, rc := range []*corev1.Container{headContainer(c), workerContainer(c)} {
					rc.VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: "/tmp/ray"}}
				}
			},
			opts:           Options{HistoryServer: true},
			wantContainers: []string{"ray", "ray-history-collector", "fluentbit"}, wantExportEnv: exportEnv, wantLogVolumes: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(tc.mutate)
			tc.opts.HeadSidecarContainers, tc.opts.WorkerSidecarContainers = []corev1.Container{sidecar}, []corev1.Container{sidecar}
			for role, pod := range map[string]*corev1.Pod{"head": buildHead(t, c, tc.opts), "worker": buildWorker(t, c, WorkerIndex{}, tc.opts)} {
				var names []string
				for i, ct := range pod.Spec.Containers {
					if i == 0 {
						names = append(names, "ray")
						continue
					}
					names = append(names, ct.Name)
				}
				if diff := cmp.Diff(tc.wantContainers, names); diff != "" {
					t.Errorf("%s containers (-want +got):\n%s", role, diff)
				}
				var gotExport []corev1.EnvVar
				for _, e := range pod.Spec.Containers[0].Env {
					if _, ok := map[string]bool{"RAY_enable_ray_event": true, "RAY_enable_core_worker_ray_event_to_aggregator": true,
						"RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR": true, "RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES": true,
						"RAY_DASHBOARD_AGGREGATOR_AGENT_PUBLISHER_HTTP_ENDPOINT_EXPOSABLE_EVENT_TYPES": true}[e.Name]; ok {
						gotExport = append(gotExport, e)
					}
				}
				if diff := cmp.Diff(tc.wantExportEnv, gotExport); diff != "" {
					t.Errorf("%s Ray event export env (-want +got):\n%s", role, diff)
				}
				if got := len(volumesNamed(pod, "ray-logs")); got != tc.wantLogVolumes {
					t.Errorf("%s ray-logs volumes = %d, want %d", role, got, tc.wantLogVolumes)
				}
				if got := len(mountsNamed(pod.Spec.Containers[0], "ray-logs")); got != tc.wantLogMounts {
					t.Errorf("%s Ray container ray-logs mounts = %d, want %d", role, got, tc.wantLogMounts)
				}
			}
		})
	}
}
