package validation

import (
	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func autoscalingEnabled(spec *rayv1.RayClusterSpec) bool {
	return spec.EnableInTreeAutoscaling != nil && *spec.EnableInTreeAutoscaling
}

// autoscalerV2Enabled: only an explicit autoscalerOptions.version v2 counts,
// as in KubeRay. rayVersion is not read: the release whose `ray start`
// turns v2 on by default under KubeRay (2.48.0) is not one validation can
// tell from a manifest, and inferring it admitted manifests KubeRay refuses.
func autoscalerV2Enabled(spec *rayv1.RayClusterSpec) bool {
	opts := spec.AutoscalerOptions
	return opts != nil && opts.Version != nil && *opts.Version == rayv1.AutoscalerVersionV2
}

// autoscalerV2Requested: v2 by autoscalerOptions.version or, as KubeRay
// before 1.4 asked users to, by RAY_enable_autoscaler_v2 on the head.
func autoscalerV2Requested(c *specCheck) bool {
	return autoscalerV2Enabled(c.spec) || envIsTrue(c.head().Env, envRayEnableAutoscalerV2)
}

func envVar(env []corev1.EnvVar, name string) (corev1.EnvVar, bool) {
	for _, e := range env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

func envExists(env []corev1.EnvVar, name string) bool {
	_, ok := envVar(env, name)
	return ok
}

func envIsTrue(env []corev1.EnvVar, name string) bool {
	e, ok := envVar(env, name)
	return ok && (e.Value == "1" || e.Value == "true")
}
