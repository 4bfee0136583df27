package raypod

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/gcsstorage"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// BuildHeadPod builds the head Pod of cluster. It returns an error only when
// the head template has no container.
func BuildHeadPod(cluster *rayv1.RayCluster, opts Options) (*corev1.Pod, error) {
	head := &cluster.Spec.HeadGroupSpec
	b, err := newPodBuild(cluster, opts, rayv1.HeadNode, rayv1.HeadGroupName, groupSpec{
		template:       &head.Template,
		rayStartParams: head.RayStartParams,
		resources:      head.Resources,
		labels:         head.Labels,
	})
	if err != nil {
		return nil, err
	}
	if opts.DeterministicHeadPodName {
		b.pod.Name = naming.HeadPodName(cluster.Name)
	} else {
		b.pod.GenerateName = naming.HeadPodGenerateName(cluster.Name)
	}
	setDefaultParams(b.params, rayv1.HeadNode, "")
	b.initAnnotations()
	if AutoscalingEnabled(cluster) {
		b.addAutoscaler()
	}
	b.configureHeadFaultTolerance()
	b.addMetricsPort()
	if rayv1.IsAuthEnabled(&cluster.Spec) {
		b.configureTokenAuth()
	}
	b.configureTLS()
	b.addCollector()
	b.pod.Spec.Containers = append(b.pod.Spec.Containers, opts.HeadSidecarContainers...)
	return b.finish(), nil
}

// configureHeadFaultTolerance records whether GCS fault tolerance is on in
// the ray.io/ft-enabled annotation and hands the head its backend: the
// embedded RocksDB store on a claim, or the Redis address, credentials and
// storage namespace.
func (b *podBuild) configureHeadFaultTolerance() {
	enabled := rayv1.IsGCSFaultToleranceEnabled(&b.cluster.Spec, b.cluster.Annotations)
	b.pod.Annotations[rayv1.AnnotationFTEnabled] = strconv.FormatBool(enabled)
	if !enabled {
		return
	}
	if gcsstorage.Embedded(b.cluster) {
		b.configureEmbeddedStorage() // no Redis, so no storage namespace either
		return
	}
	opts := b.cluster.Spec.GcsFaultToleranceOptions
	c := b.rayContainer()
	ns := ExternalStorageNamespace(b.cluster)
	b.pod.Annotations[rayv1.AnnotationExternalStorageNamespace] = ns
	addEnvIfMissing(c, corev1.EnvVar{Name: EnvExternalStorageNamespace, Value: ns})

	if opts == nil {
		// Legacy annotation-based FT: a password given inline in rayStartParams
		// is exported so that the Redis cleanup Job can log in too.
		if pw, ok := b.params[paramRedisPassword]; ok {
			addEnvIfMissing(c, corev1.EnvVar{Name: EnvRedisPassword, Value: pw})
		}
		return
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: EnvRedisAddress, Value: opts.RedisAddress})
	if u := opts.RedisUsername; u != nil {
		b.params[paramRedisUsername] = "$" + EnvRedisUsername
		c.Env = append(c.Env, corev1.EnvVar{Name: EnvRedisUsername, Value: u.Value, ValueFrom: u.ValueFrom})
	}
	if p := opts.RedisPassword; p != nil {
		b.params[paramRedisPassword] = "$" + EnvRedisPassword
		c.Env = append(c.Env, corev1.EnvVar{Name: EnvRedisPassword, Value: p.Value, ValueFrom: p.ValueFrom})
	}
}

// configureEmbeddedStorage points Ray's GCS at the RocksDB store on the
// cluster's claim, mounted at /data/gcs (the storage's subPath of it);
// variables the user sets win.
func (b *podBuild) configureEmbeddedStorage() {
	c := b.rayContainer()
	addEnvIfMissing(c,
		corev1.EnvVar{Name: gcsstorage.EnvStorage, Value: gcsstorage.RocksDB},
		corev1.EnvVar{Name: gcsstorage.EnvStoragePath, Value: gcsstorage.MountPath})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{
		Name:      gcsstorage.VolumeName,
		MountPath: gcsstorage.MountPath,
		SubPath:   gcsstorage.SubPath(b.cluster),
	})
	b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{
		Name: gcsstorage.VolumeName,
		VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: gcsstorage.ClaimName(b.cluster),
		}},
	})
}

// ExternalStorageNamespace is the Redis namespace of the cluster's GCS data:
// gcsFaultToleranceOptions.externalStorageNamespace, else the
// ray.io/external-storage-namespace annotation, else the cluster UID.
func ExternalStorageNamespace(cluster *rayv1.RayCluster) string {
	if o := cluster.Spec.GcsFaultToleranceOptions; o != nil && o.ExternalStorageNamespace != "" {
		return o.ExternalStorageNamespace
	}
	if v, ok := cluster.Annotations[rayv1.AnnotationExternalStorageNamespace]; ok {
		return v
	}
	return string(cluster.UID)
}
