// Package raypod builds the head and worker Pods of a RayCluster the way
// KubeRay does: labels, the generated `ray start` command, the Ray container
// environment, probes, volumes, the wait-gcs-ready init container and the
// autoscaler sidecar. The builders are pure: everything they depend on comes
// from the RayCluster and an Options value the caller fills in once from the
// operator configuration.
package raypod

import (
	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
)

// Options are the operator-wide knobs that shape Ray Pods. The zero value is
// KubeRay's default behaviour.
type Options struct {
	// DisableInitContainerInjection drops the worker wait-gcs-ready init
	// container (ENABLE_INIT_CONTAINER_INJECTION=false).
	DisableInitContainerInjection bool
	// DisableProbesInjection keeps the operator from adding readiness and
	// liveness probes (ENABLE_PROBES_INJECTION=false).
	DisableProbesInjection bool
	// DeterministicHeadPodName names the head Pod "<cluster>-head" instead of
	// using a generateName (ENABLE_DETERMINISTIC_HEAD_POD_NAME=true).
	DeterministicHeadPodName bool
	// LoginShell runs generated commands with `bash -lc` instead of `bash -c`
	// (ENABLE_LOGIN_SHELL=true).
	LoginShell bool
	// MultiHostIndexing adds the replica name/index and host index labels to
	// worker Pods (feature gate RayMultiHostIndexing).
	MultiHostIndexing bool
	// HistoryServer adds the history server collector sidecar to the Pods
	// of clusters that ask for one (feature gate RayClusterHistoryServer).
	HistoryServer bool
	// MTLS mounts the cert-manager certificates and sets Ray's TLS
	// variables in the Pods of clusters with spec.tlsOptions.enabled
	// (feature gate RayClusterMTLS).
	MTLS bool
	// ClusterDomain is the cluster DNS domain (CLUSTER_DOMAIN); empty means
	// cluster.local.
	ClusterDomain string
	// OperatorVersion is reported to Ray usage stats in
	// RAY_USAGE_STATS_EXTRA_TAGS; empty means this binary's version
	// (buildinfo.Version).
	OperatorVersion string
	// HeadSidecarContainers are appended to every head Pod.
	HeadSidecarContainers []corev1.Container
	// WorkerSidecarContainers are appended to every worker Pod.
	WorkerSidecarContainers []corev1.Container
	// DefaultContainerEnvs are added to the Ray container unless it already
	// sets a variable of the same name.
	DefaultContainerEnvs []corev1.EnvVar
	// DefaultPodLabels and DefaultPodAnnotations are added to every Ray Pod
	// unless the Pod template sets the same key.
	DefaultPodLabels      map[string]string
	DefaultPodAnnotations map[string]string
	// BatchScheduler, when set, adds scheduler-specific metadata to each Pod.
	BatchScheduler PodMutator
}

// PodMutator lets a batch scheduler integration (Volcano, YuniKorn, Kueue's
// scheduling gates, ...) decorate a Pod after it has been built. groupName is
// the worker group name, or "headgroup" for the head.
type PodMutator interface {
	MutatePod(cluster *rayv1.RayCluster, pod *corev1.Pod, groupName string)
}

// CreatorKind is the kind of the custom resource a RayCluster was created
// for, as recorded in its ray.io/originated-from-crd label.
type CreatorKind string

// Values of CreatorKind.
const (
	CreatorRayCluster CreatorKind = rayv1.KindRayCluster
	CreatorRayJob     CreatorKind = rayv1.KindRayJob
	CreatorRayService CreatorKind = rayv1.KindRayService
)

// creatorOf reads the creator kind from the cluster's labels; anything
// unknown counts as a standalone RayCluster.
func creatorOf(cluster *rayv1.RayCluster) CreatorKind {
	switch k := CreatorKind(cluster.Labels[rayv1.LabelOriginatedFromCRD]); k {
	case CreatorRayJob, CreatorRayService:
		return k
	default:
		return CreatorRayCluster
	}
}

func (o Options) operatorVersion() string {
	if o.OperatorVersion == "" {
		return buildinfo.Version()
	}
	return o.OperatorVersion
}

// shellCommand is the command KubeRay gives containers whose arguments are a
// shell script: ["/bin/bash", "-c", "--"], or "-cl" with a login shell.
func (o Options) shellCommand() []string {
	flags := "-c"
	if o.LoginShell {
		flags += "l"
	}
	return []string{"/bin/bash", flags, "--"}
}
