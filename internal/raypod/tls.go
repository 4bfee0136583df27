package raypod

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// Mutual TLS between Ray processes (feature gate RayClusterMTLS,
// spec.tlsOptions.enabled): the Pod mounts the Secret cert-manager issues
// for its node type and Ray reads it through KubeRay's variables.
const (
	// TLSVolumeName is the Secret volume of the certificate.
	TLSVolumeName = "ray-tls"
	// TLSMountPath is where it is mounted.
	TLSMountPath = "/etc/ray/tls"
	// WaitForTLSIPSANName is the init container that waits until the
	// mounted certificate names the Pod's IP.
	WaitForTLSIPSANName = "wait-for-tls-ip-san"

	EnvUseTLS        = "RAY_USE_TLS"
	EnvTLSServerCert = "RAY_TLS_SERVER_CERT"
	EnvTLSServerKey  = "RAY_TLS_SERVER_KEY"
	EnvTLSCACert     = "RAY_TLS_CA_CERT"
)

// waitForTLSIPSANScript polls the mounted certificate every 5 seconds until
// one of its IP SANs is the Pod's IP (KubeRay's script).
const waitForTLSIPSANScript = `CERT="%s"
if [ -z "${POD_IP}" ]; then
  POD_IP=$(hostname -i 2>/dev/null | awk '{print $1}')
fi
if ! command -v openssl >/dev/null 2>&1; then
  echo "openssl not found; cannot verify IP SAN" >&2
  exit 1
fi
echo "Waiting for TLS cert to include IP SAN for ${POD_IP}..."
while true; do
  if openssl x509 -in "${CERT}" -noout -text 2>/dev/null | grep -qE "IP Address:${POD_IP}([^0-9.]|$)"; then
    echo "TLS cert now includes IP SAN for ${POD_IP}"
    exit 0
  fi
  echo "IP SAN for ${POD_IP} not yet in cert, retrying in 5s..."
  sleep 5
done`

// TLSEnabled reports whether the cluster's Pods get mutual TLS: the gate
// (gateOn) is on and spec.tlsOptions.enabled is true.
func TLSEnabled(cluster *rayv1.RayCluster, gateOn bool) bool {
	o := cluster.Spec.TLSOptions
	return gateOn && o != nil && o.Enabled != nil && *o.Enabled
}

func (b *podBuild) tlsEnabled() bool { return TLSEnabled(b.cluster, b.opts.MTLS) }

// configureTLS mounts the node type's certificate Secret, gives the Ray
// container and wait-gcs-ready the TLS variables and mount, and puts the
// IP SAN wait first among the init containers.
func (b *podBuild) configureTLS() {
	if !b.tlsEnabled() {
		return
	}
	if !slices.ContainsFunc(b.pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == TLSVolumeName }) {
		b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{
			Name: TLSVolumeName,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: naming.TLSSecretName(b.cluster.Name, b.nodeType),
			}},
		})
	}
	setContainerTLS(b.rayContainer())
	if i := containerIndex(b.pod.Spec.InitContainers, waitGCSReadyName); i >= 0 {
		setContainerTLS(&b.pod.Spec.InitContainers[i])
	}
	if containerIndex(b.pod.Spec.InitContainers, WaitForTLSIPSANName) < 0 {
		b.pod.Spec.InitContainers = append([]corev1.Container{b.waitForTLSIPSANContainer()}, b.pod.Spec.InitContainers...)
	}
}

// setContainerTLS adds the TLS variables the container lacks and the
// certificate mount unless one already has its name or path.
func setContainerTLS(c *corev1.Container) {
	addEnvIfMissing(c,
		corev1.EnvVar{Name: EnvUseTLS, Value: "1"},
		corev1.EnvVar{Name: EnvTLSServerCert, Value: TLSMountPath + "/tls.crt"},
		corev1.EnvVar{Name: EnvTLSServerKey, Value: TLSMountPath + "/tls.key"},
		corev1.EnvVar{Name: EnvTLSCACert, Value: TLSMountPath + "/ca.crt"})
	if slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == TLSVolumeName || m.MountPath == TLSMountPath
	}) {
		return
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: TLSVolumeName, MountPath: TLSMountPath, ReadOnly: true})
}

// waitForTLSIPSANContainer runs the wait script with the Ray container's
// image, pull policy and security context, 50m/64Mi.
func (b *podBuild) waitForTLSIPSANContainer() corev1.Container {
	ray := b.rayContainer()
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("50m"),
		corev1.ResourceMemory: resource.MustParse("64Mi"),
	}
	return corev1.Container{
		Name:            WaitForTLSIPSANName,
		Image:           ray.Image,
		ImagePullPolicy: ray.ImagePullPolicy,
		Command:         []string{"sh", "-c"},
		Args:            []string{fmt.Sprintf(waitForTLSIPSANScript, TLSMountPath+"/tls.crt")},
		SecurityContext: ray.SecurityContext.DeepCopy(),
		Env:             []corev1.EnvVar{fieldEnv(EnvPodIP, "status.podIP")},
		VolumeMounts:    []corev1.VolumeMount{{Name: TLSVolumeName, MountPath: TLSMountPath, ReadOnly: true}},
		Resources:       corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()},
	}
}

// WithoutTLSWait returns the init containers without the IP SAN wait, for
// Pods whose IP no certificate will name (the Redis cleanup Job's).
func WithoutTLSWait(containers []corev1.Container) []corev1.Container {
	return slices.DeleteFunc(containers, func(c corev1.Container) bool { return c.Name == WaitForTLSIPSANName })
}
