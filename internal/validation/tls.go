package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/raytls"
)

// Environment variables the operator manages when mutual TLS is on, and
// the volume and path of the certificate it mounts (KubeRay's).
var tlsEnvVars = []string{"RAY_USE_TLS", "RAY_TLS_SERVER_CERT", "RAY_TLS_SERVER_KEY", "RAY_TLS_CA_CERT"}

const (
	tlsVolumeName = "ray-tls"
	tlsMountPath  = "/etc/ray/tls"
	tlsManaged    = " when tlsOptions is set - the operator manages TLS configuration automatically"
)

// tlsOptions needs the RayClusterMTLS gate for spec.tlsOptions and, when
// it is enabled, refuses what would clash with what the operator sets: the
// TLS variables and a ray-tls or /etc/ray/tls mount in the Ray containers
// (head, then each worker group) and in autoscalerOptions. The
// ray.io/mtls-certificates annotation, when set, must name a source.
func tlsOptions(c *specCheck) error {
	opts := c.spec.TLSOptions
	if opts == nil {
		return nil
	}
	if !c.gates.Enabled(features.RayClusterMTLS) {
		return fmt.Errorf("spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled")
	}
	if opts.Enabled == nil || !*opts.Enabled {
		return nil
	}
	if v, ok := c.annotations[raytls.AnnotationCertificates]; ok && v != raytls.SourceCertManager && v != raytls.SourceOperator {
		return fmt.Errorf("annotation %s must be %q or %q, got %q",
			raytls.AnnotationCertificates, raytls.SourceCertManager, raytls.SourceOperator, v)
	}
	if err := tlsContainerConflict(c.head(), "head Pod"); err != nil {
		return err
	}
	for _, group := range c.spec.WorkerGroupSpecs {
		if len(group.Template.Spec.Containers) == 0 {
			continue
		}
		if err := tlsContainerConflict(group.Template.Spec.Containers[rayv1.RayContainerIndex], fmt.Sprintf("worker group %q", group.GroupName)); err != nil {
			return err
		}
	}
	return tlsAutoscalerConflict(c.spec.AutoscalerOptions)
}

func tlsContainerConflict(c corev1.Container, where string) error {
	for _, name := range tlsEnvVars {
		if envExists(c.Env, name) {
			return fmt.Errorf("cannot set %s environment variable in %s"+tlsManaged, name, where)
		}
	}
	return tlsMountConflict(c.VolumeMounts, where)
}

func tlsMountConflict(mounts []corev1.VolumeMount, where string) error {
	for _, m := range mounts {
		if m.Name == tlsVolumeName {
			return fmt.Errorf("cannot use volume mount named %q in %s"+tlsManaged, tlsVolumeName, where)
		}
		if m.MountPath == tlsMountPath {
			return fmt.Errorf("cannot use volume mount at path %q in %s"+tlsManaged, tlsMountPath, where)
		}
	}
	return nil
}

func tlsAutoscalerConflict(o *rayv1.AutoscalerOptions) error {
	if o == nil {
		return nil
	}
	for _, name := range tlsEnvVars {
		if envExists(o.Env, name) {
			return fmt.Errorf("cannot set %s environment variable in autoscalerOptions.env when tlsOptions is set "+
				"- the operator manages TLS configuration for the autoscaler automatically", name)
		}
	}
	return tlsMountConflict(o.VolumeMounts, "autoscalerOptions.volumeMounts")
}
