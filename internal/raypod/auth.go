package raypod

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// Token authentication wiring.
const (
	// AuthTokenSecretKey is the key of the token in the auth Secret.
	AuthTokenSecretKey = "auth_token"
	// RayTokenVolumeName is the projected service account token volume used
	// when Ray checks tokens against the Kubernetes API.
	RayTokenVolumeName = "ray-token"
	// RayTokenMountPath is where that token is mounted.
	RayTokenMountPath = "/var/run/secrets/ray.io/serviceaccount"
	waitGCSReadyName  = "wait-gcs-ready"
)

func k8sTokenAuth(cluster *rayv1.RayCluster) bool {
	o := cluster.Spec.AuthOptions
	return o != nil && o.EnableK8sTokenAuth != nil && *o.EnableK8sTokenAuth
}

// configureTokenAuth gives the Ray container and the wait-gcs-ready init
// container the auth environment, and mounts the projected token volume in
// Kubernetes token mode.
func (b *podBuild) configureTokenAuth() {
	b.setTokenAuthEnv(b.rayContainer())
	if k8sTokenAuth(b.cluster) && !slices.ContainsFunc(b.pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == RayTokenVolumeName }) {
		b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{
			Name: RayTokenVolumeName,
			VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}},
			}},
		})
	}
	if i := containerIndex(b.pod.Spec.InitContainers, waitGCSReadyName); i >= 0 {
		b.setTokenAuthEnv(&b.pod.Spec.InitContainers[i])
	}
}

// setTokenAuthEnv sets RAY_AUTH_MODE=token and either the token from the
// auth Secret or, in Kubernetes token mode, the mounted service account token.
func (b *podBuild) setTokenAuthEnv(c *corev1.Container) {
	addEnvIfMissing(c, corev1.EnvVar{Name: EnvAuthMode, Value: string(rayv1.AuthModeToken)})
	if !k8sTokenAuth(b.cluster) {
		addEnvIfMissing(c, corev1.EnvVar{Name: EnvAuthToken, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: naming.AuthSecretName(b.cluster)},
				Key:                  AuthTokenSecretKey,
			},
		}})
		return
	}
	addEnvIfMissing(c, corev1.EnvVar{Name: EnvEnableK8sTokenAuth, Value: "true"})
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == RayTokenVolumeName }) {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: RayTokenVolumeName, MountPath: RayTokenMountPath, ReadOnly: true})
	}
}
