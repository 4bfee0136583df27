package raypod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// AutoscalerContainerName is the name of the autoscaler sidecar of the head.
const AutoscalerContainerName = "autoscaler"

// autoscalerStartCmd starts the KubeRay autoscaler; it is also exported in
// KUBERAY_GEN_AUTOSCALER_START_CMD so custom args can reuse it.
const autoscalerStartCmd = "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) --cluster-namespace $(RAY_CLUSTER_NAMESPACE)"

// AutoscalingEnabled reports whether spec.enableInTreeAutoscaling is true: the
// head then gets the autoscaler sidecar and the cluster its RBAC objects.
func AutoscalingEnabled(cluster *rayv1.RayCluster) bool {
	return cluster.Spec.EnableInTreeAutoscaling != nil && *cluster.Spec.EnableInTreeAutoscaling
}

// autoscalerVersion is the version forced by autoscalerOptions.version, or ""
// when Ray should decide (v2 by default from Ray 2.48.0 under KubeRay).
func autoscalerVersion(cluster *rayv1.RayCluster) rayv1.AutoscalerVersion {
	if o := cluster.Spec.AutoscalerOptions; o != nil && o.Version != nil {
		return *o.Version
	}
	return ""
}

// addAutoscaler turns off Ray's built-in monitor, runs the head under the
// autoscaler's service account and adds the autoscaler sidecar. A forced
// autoscaler version is passed to Ray through RAY_enable_autoscaler_v2; v2
// also needs RestartPolicy Never so that a failed node is replaced, not
// restarted.
func (b *podBuild) addAutoscaler() {
	b.params[paramNoMonitor] = "true"
	b.pod.Spec.ServiceAccountName = naming.AutoscalerServiceAccountName(b.cluster)
	sidecar := autoscalerContainer(b.rayContainer().Image, b.opts.shellCommand())
	if rayv1.IsAuthEnabled(&b.cluster.Spec) {
		b.setTokenAuthEnv(&sidecar)
	}
	if b.tlsEnabled() {
		setContainerTLS(&sidecar)
	}
	mergeAutoscalerOptions(&sidecar, b.cluster.Spec.AutoscalerOptions)
	b.pod.Spec.Containers = append(b.pod.Spec.Containers, sidecar)

	switch autoscalerVersion(b.cluster) {
	case rayv1.AutoscalerVersionV2:
		b.rayContainer().Env = append(b.rayContainer().Env, corev1.EnvVar{Name: EnvEnableAutoscalerV2, Value: "true"})
		b.pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	case rayv1.AutoscalerVersionV1:
		b.rayContainer().Env = append(b.rayContainer().Env, corev1.EnvVar{Name: EnvEnableAutoscalerV2, Value: "false"})
	}
}

// autoscalerContainer is the default sidecar: the Ray image, 500m/512Mi.
func autoscalerContainer(image string, shell []string) corev1.Container {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("500m"),
		corev1.ResourceMemory: resource.MustParse("512Mi"),
	}
	return corev1.Container{
		Name:            AutoscalerContainerName,
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Env: []corev1.EnvVar{
			fieldEnv(EnvRayClusterName, labelFieldPath(rayv1.LabelCluster)),
			fieldEnv(EnvRayClusterNamespace, "metadata.namespace"),
			fieldEnv("RAY_HEAD_POD_NAME", "metadata.name"),
			{Name: "KUBERAY_CRD_VER", Value: "v1"},
			{Name: EnvGeneratedAutoscalerCmd, Value: autoscalerStartCmd},
		},
		Command:   shell,
		Args:      []string{autoscalerStartCmd},
		Resources: corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()},
	}
}

// mergeAutoscalerOptions applies the user's autoscalerOptions: resources,
// image, pull policy, security context, command and args replace the
// defaults; env, envFrom and volume mounts are appended.
func mergeAutoscalerOptions(c *corev1.Container, o *rayv1.AutoscalerOptions) {
	if o == nil {
		return
	}
	if o.Resources != nil {
		c.Resources = *o.Resources.DeepCopy()
	}
	if o.Image != nil {
		c.Image = *o.Image
	}
	if o.ImagePullPolicy != nil {
		c.ImagePullPolicy = *o.ImagePullPolicy
	}
	if o.SecurityContext != nil {
		c.SecurityContext = o.SecurityContext.DeepCopy()
	}
	c.Env = append(c.Env, o.Env...)
	c.EnvFrom = append(c.EnvFrom, o.EnvFrom...)
	c.VolumeMounts = append(c.VolumeMounts, o.VolumeMounts...)
	if len(o.Command) > 0 {
		c.Command = append([]string(nil), o.Command...)
	}
	if len(o.Args) > 0 {
		c.Args = append([]string(nil), o.Args...)
	}
}
