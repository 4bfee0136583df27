package validation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func autoscalingEnabled(spec *rayv1.RayClusterSpec) bool {
	return spec.EnableInTreeAutoscaling != nil && *spec.EnableInTreeAutoscaling
}

// autoscalerV2Enabled: an explicit autoscalerOptions.version wins; otherwise
// Ray 2.47.0 and later default to v2.
func autoscalerV2Enabled(spec *rayv1.RayClusterSpec) bool {
	if opts := spec.AutoscalerOptions; opts != nil && opts.Version != nil {
		return *opts.Version == rayv1.AutoscalerVersionV2
	}
	v, err := version.ParseGeneric(spec.RayVersion)
	return err == nil && v.AtLeast(version.MustParseGeneric(autoscalerV2MinimumRayVersion))
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
