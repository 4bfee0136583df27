package raypod

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// Environment variables the operator sets on Ray containers.
const (
	EnvRayClusterName           = "RAY_CLUSTER_NAME"
	EnvRayClusterNamespace      = "RAY_CLUSTER_NAMESPACE"
	EnvRayIP                    = "RAY_IP"
	EnvFQRayIP                  = "FQ_RAY_IP"
	EnvRayPort                  = "RAY_PORT"
	EnvRayAddress               = "RAY_ADDRESS"
	EnvRayCloudInstanceID       = "RAY_CLOUD_INSTANCE_ID"
	EnvRayNodeTypeName          = "RAY_NODE_TYPE_NAME"
	EnvGeneratedRayStartCmd     = "KUBERAY_GEN_RAY_START_CMD"
	EnvUsageStatsKubeRayInUse   = "RAY_USAGE_STATS_KUBERAY_IN_USE"
	EnvUsageStatsExtraTags      = "RAY_USAGE_STATS_EXTRA_TAGS"
	EnvDashboardK8sDiskUsage    = "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE"
	EnvTaskWaitForDeathInfoMs   = "RAY_timeout_ms_task_wait_for_death_info"
	EnvGcsServerRequestTimeoutS = "RAY_gcs_server_request_timeout_seconds"
	EnvServeKVTimeoutS          = "RAY_SERVE_KV_TIMEOUT_S"
	EnvRedisAddress             = "RAY_REDIS_ADDRESS"
	EnvRedisPassword            = "REDIS_PASSWORD"
	EnvRedisUsername            = "REDIS_USERNAME"
	EnvExternalStorageNamespace = "RAY_external_storage_namespace"
	EnvGcsReconnectTimeoutS     = "RAY_gcs_rpc_server_reconnect_timeout_s"
	EnvEnableAutoscalerV2       = "RAY_enable_autoscaler_v2"
	EnvAuthMode                 = "RAY_AUTH_MODE"
	EnvAuthToken                = "RAY_AUTH_TOKEN"
	EnvEnableK8sTokenAuth       = "RAY_ENABLE_K8S_TOKEN_AUTH"
	EnvUlimitOpenFiles          = "RAY_START_ULIMIT_OPEN_FILES"
	EnvGeneratedAutoscalerCmd   = "KUBERAY_GEN_AUTOSCALER_START_CMD"
)

// localHost is the address the head's own processes use to reach GCS.
const localHost = "127.0.0.1"

// workerGcsReconnectTimeoutS lets workers survive a GCS restart under GCS FT.
const workerGcsReconnectTimeoutS = "600"

func hasEnv(envs []corev1.EnvVar, name string) bool {
	return slices.ContainsFunc(envs, func(e corev1.EnvVar) bool { return e.Name == name })
}

// addEnvIfMissing appends each variable the container does not set yet.
func addEnvIfMissing(c *corev1.Container, envs ...corev1.EnvVar) {
	for _, e := range envs {
		if !hasEnv(c.Env, e.Name) {
			c.Env = append(c.Env, e)
		}
	}
}

func fieldEnv(name, fieldPath string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath},
	}}
}

func labelFieldPath(key string) string {
	return fmt.Sprintf("metadata.labels['%s']", key)
}

// headAddressEnv is FQ_RAY_IP and the deprecated RAY_IP (the Service name).
func headAddressEnv(fqdn string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvFQRayIP, Value: fqdn},
		{Name: EnvRayIP, Value: naming.HostFromFQDN(fqdn)},
	}
}

// setRayContainerEnv sets the environment KubeRay gives the Ray container, in
// KubeRay's order. Variables the user set win where KubeRay lets them.
func (b *podBuild) setRayContainerEnv(startCmd string) {
	c := b.rayContainer()
	addEnvIfMissing(c, b.opts.DefaultContainerEnvs...)
	ip := localHost
	if b.nodeType == rayv1.WorkerNode {
		ip = b.fqdn
		c.Env = append(c.Env, headAddressEnv(b.fqdn)...)
	}
	c.Env = append(c.Env,
		fieldEnv(EnvRayClusterName, labelFieldPath(rayv1.LabelCluster)),
		fieldEnv(EnvRayClusterNamespace, "metadata.namespace"),
		fieldEnv(EnvRayCloudInstanceID, "metadata.name"),
		fieldEnv(EnvRayNodeTypeName, labelFieldPath(rayv1.LabelGroup)),
		corev1.EnvVar{Name: EnvGeneratedRayStartCmd, Value: startCmd},
	)
	addEnvIfMissing(c, corev1.EnvVar{Name: EnvRayPort, Value: b.headPort})
	if b.creator == CreatorRayService {
		addEnvIfMissing(c,
			corev1.EnvVar{Name: EnvTaskWaitForDeathInfoMs, Value: "0"},
			corev1.EnvVar{Name: EnvGcsServerRequestTimeoutS, Value: "5"},
			corev1.EnvVar{Name: EnvServeKVTimeoutS, Value: "5"},
		)
	}
	addEnvIfMissing(c,
		corev1.EnvVar{Name: EnvRayAddress, Value: ip + ":" + b.headPort},
		corev1.EnvVar{Name: EnvUsageStatsKubeRayInUse, Value: "1"},
	)
	if b.nodeType == rayv1.HeadNode {
		c.Env = append(c.Env, corev1.EnvVar{
			Name:  EnvUsageStatsExtraTags,
			Value: fmt.Sprintf("kuberay_version=%s;kuberay_crd=%s", b.opts.operatorVersion(), b.creator),
		})
	}
	addEnvIfMissing(c, corev1.EnvVar{Name: EnvDashboardK8sDiskUsage, Value: "1"})
	b.setEventExportEnv()
}

// setInitContainerEnv gives every init container the head address, which the
// worker's wait-gcs-ready check and TLS setups of the head need.
func (b *podBuild) setInitContainerEnv() {
	for i := range b.pod.Spec.InitContainers {
		ic := &b.pod.Spec.InitContainers[i]
		ic.Env = append(ic.Env, headAddressEnv(b.fqdn)...)
	}
}
