package validation

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/features"
)

// MaxRayJobNameLength leaves room for the "-xxxxx" suffix of the generated
// RayCluster name within MaxRayClusterNameLength.
const MaxRayJobNameLength = MaxRayClusterNameLength - 6

// RayJobMetadata checks a RayJob's name (layer 1): it must fit in the names
// derived from it and be a DNS-1035 label.
func RayJobMetadata(obj metav1.ObjectMeta) error {
	if len(obj.Name) > MaxRayJobNameLength {
		return kubeRayErrorf("The RayJob metadata is invalid: RayJob name should be no more than %d characters", MaxRayJobNameLength)
	}
	if errs := k8svalidation.IsDNS1035Label(obj.Name); len(errs) > 0 {
		return kubeRayErrorf("The RayJob metadata is invalid: RayJob name should be a valid DNS1035 label: %v", errs)
	}
	return nil
}

// RayJobSpec checks a RayJob spec (layer 2) with KubeRay's rules, in
// KubeRay's order; the first failing rule wins. annotations are those of the
// RayJob that carries the spec (GCS fault tolerance can be switched on by
// annotation). A RayCronJob's jobTemplate is checked with it too, with the
// annotations its RayJobs will carry.
func RayJobSpec(spec *rayv1.RayJobSpec, annotations map[string]string, gates FeatureGates) error {
	c := &jobCheck{spec: spec, annotations: annotations, gates: gates}
	for _, rule := range jobRules {
		if err := rule(c); err != nil {
			return err
		}
	}
	return nil
}

// RayJobStatus checks that the status is coherent with the spec (layer 4):
// only an InteractiveMode RayJob may wait for its job id.
func RayJobStatus(job *rayv1.RayJob) error {
	if job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusWaiting && job.Spec.EffectiveSubmissionMode() != rayv1.InteractiveMode {
		return kubeRayError("The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when SubmissionMode is not InteractiveMode")
	}
	return nil
}

// jobCheck is what every RayJob spec rule reads.
type jobCheck struct {
	spec        *rayv1.RayJobSpec
	annotations map[string]string
	gates       FeatureGates
}

// jobRule is one check of a RayJob spec.
type jobRule func(c *jobCheck) error

// jobRules are KubeRay's RayJob spec rules, in KubeRay's order.
var jobRules = []jobRule{
	jobSuspend,
	jobDeletion,
	jobClusterSource,
	jobSubmissionMode,
	jobClusterSpec,
	jobLimits,
	jobMetadata,
}

// minMetadataRayVersion is the first Ray whose `ray job submit` has
// --metadata-json.
var minMetadataRayVersion = version.MustParseGeneric("2.6.0")

// jobMetadata: in the modes that run a submitter (K8sJobMode, SidecarMode)
// spec.metadata goes to `ray job submit --metadata-json`, which Ray has from
// 2.6.0; a cluster that declares an older or unreadable rayVersion cannot
// take it. KubeRay finds this only when it builds the submitter (and retries
// forever); it is refused here, with KubeRay's messages. HTTPMode sends the
// metadata in the REST body (Ray 2.0.0 has it) and InteractiveMode submits
// nothing, so neither is checked, as in KubeRay.
func jobMetadata(c *jobCheck) error {
	cluster := c.spec.RayClusterSpec
	if len(c.spec.Metadata) == 0 || cluster == nil || cluster.RayVersion == "" {
		return nil
	}
	if mode := c.spec.EffectiveSubmissionMode(); mode != rayv1.K8sJobMode && mode != rayv1.SidecarMode {
		return nil
	}
	v, err := version.ParseGeneric(cluster.RayVersion)
	if err != nil {
		return kubeRayErrorf("The RayJob spec is invalid: failed to parse Ray version: %v: %w", cluster.RayVersion, err)
	}
	if v.LessThan(minMetadataRayVersion) {
		return kubeRayError("The RayJob spec is invalid: the Ray version must be at least 2.6.0 to use the metadata field")
	}
	return nil
}

// jobSuspend: suspension needs the cluster to be deleted at the end.
func jobSuspend(c *jobCheck) error {
	if c.spec.Suspend && !c.spec.ShutdownAfterJobFinishes {
		return kubeRayError("The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended")
	}
	if c.spec.TTLSecondsAfterFinished < 0 {
		return kubeRayError("The RayJob spec is invalid: TTLSecondsAfterFinished must be a non-negative integer")
	}
	return nil
}

// jobClusterSource: either a cluster spec or a selected cluster, and what a
// selected cluster cannot do.
func jobClusterSource(c *jobCheck) error {
	spec := c.spec
	selector := spec.UsesClusterSelector()
	if spec.Suspend && selector {
		return kubeRayError("The RayJob spec is invalid: the ClusterSelector mode doesn't support the suspend operation")
	}
	if spec.RayClusterSpec == nil && !selector {
		return kubeRayError("The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set")
	}
	if !selector {
		return nil
	}
	if spec.ClusterSelector[rayv1.ClusterSelectorKey] == "" {
		return kubeRayError("cluster name in ClusterSelector should not be empty")
	}
	if spec.EffectiveSubmissionMode() == rayv1.SidecarMode {
		return kubeRayError("ClusterSelector is not supported in SidecarMode")
	}
	if spec.BackoffLimit != nil && *spec.BackoffLimit > 0 {
		return kubeRayError("The RayJob spec is invalid: BackoffLimit is incompatible with ClusterSelector mode")
	}
	return nil
}

// jobSubmissionMode: what InteractiveMode and SidecarMode cannot be
// combined with.
func jobSubmissionMode(c *jobCheck) error {
	spec := c.spec
	switch spec.EffectiveSubmissionMode() {
	case rayv1.InteractiveMode:
		// A retry would find spec.jobId still set and skip Waiting.
		if spec.BackoffLimit != nil && *spec.BackoffLimit > 0 {
			return kubeRayError("The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode")
		}
	case rayv1.SidecarMode:
		if spec.SubmitterPodTemplate != nil {
			return kubeRayError("Currently, SidecarMode doesn't support SubmitterPodTemplate")
		}
		if spec.SubmitterConfig != nil {
			return kubeRayError("Currently, SidecarMode doesn't support SubmitterConfig")
		}
		if cluster := spec.RayClusterSpec; cluster != nil {
			policy := cluster.HeadGroupSpec.Template.Spec.RestartPolicy
			if policy != "" && policy != corev1.RestartPolicyNever {
				return kubeRayError("restartPolicy for head Pod should be Never or unset when using SidecarMode")
			}
		}
	}
	return nil
}

// jobClusterSpec validates the embedded RayClusterSpec as a RayCluster's.
// KubeRay's ValidateRayJobSpec checks only the spec rules; the RayCluster
// controller later also refuses an upgradeStrategy on a RayJob's cluster,
// and the RayJob then waits in Initializing for a cluster that never comes.
// Here every RayCluster rule that follows from the RayJob is checked up
// front, against the cluster as the RayJob would create it.
func jobClusterSpec(c *jobCheck) error {
	cluster := c.spec.RayClusterSpec
	if cluster == nil {
		return nil
	}
	if opts := cluster.AuthOptions; opts != nil && opts.EnableK8sTokenAuth != nil && *opts.EnableK8sTokenAuth {
		return kubeRayError("The RayJob spec is invalid: K8s token auth mode is currently not supported for RayJob")
	}
	if err := RayClusterSpec(cluster, c.annotations, c.gates); err != nil {
		return kubeRayErrorf("The RayJob spec is invalid: %w", err)
	}
	if err := OwnedIdleTermination(cluster); err != nil {
		return kubeRayErrorf("The RayJob spec is invalid: %w", err)
	}
	created := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{rayv1.LabelOriginatedFromCRD: rayv1.KindRayJob}},
		Spec:       *cluster,
	}
	if err := RayClusterUpgradeOptions(created); err != nil {
		return kubeRayErrorf("The RayJob spec is invalid: %w", err)
	}
	return nil
}

// jobLimits: the runtime env must parse and the limits be positive.
func jobLimits(c *jobCheck) error {
	spec := c.spec
	if spec.RuntimeEnvYAML != "" {
		if _, err := dashboard.ParseRuntimeEnvYAML(spec.RuntimeEnvYAML); err != nil {
			return kubeRayErrorf("The RayJob spec is invalid: %w", err)
		}
	}
	if v := spec.ActiveDeadlineSeconds; v != nil && *v <= 0 {
		return kubeRayError("The RayJob spec is invalid: activeDeadlineSeconds must be a positive integer")
	}
	if v := spec.PreRunningDeadlineSeconds; v != nil && *v <= 0 {
		return kubeRayError("The RayJob spec is invalid: preRunningDeadlineSeconds must be a positive integer")
	}
	if v := spec.BackoffLimit; v != nil && *v < 0 {
		return kubeRayError("The RayJob spec is invalid: backoffLimit must be a positive integer")
	}
	return nil
}

// deletionPolicyOn reports the RayJobDeletionPolicy feature gate.
func deletionPolicyOn(gates FeatureGates) bool {
	return gates.Enabled(features.RayJobDeletionPolicy)
}

// kubeRayError returns an error with one of KubeRay's messages, which users
// and tools search for verbatim (hence capitalized, against Go habit).
func kubeRayError(msg string) error {
	return errors.New(msg)
}

// kubeRayErrorf is kubeRayError with formatting.
func kubeRayErrorf(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}
