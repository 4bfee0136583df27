package rayjob

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// maxRayJobNameLength leaves room for the "-xxxxx" suffix of the generated
// RayCluster name within the 53 characters a RayCluster name may have.
const maxRayJobNameLength = 47

// invalidError is a validation failure with the event reason to report it.
type invalidError struct {
	reason string
	err    error
}

func (e *invalidError) Error() string { return e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// validateRayJob checks metadata, spec and status, in KubeRay's order.
func validateRayJob(job *rayv1.RayJob, gates validation.FeatureGates) error {
	if err := validateMetadata(job); err != nil {
		return &invalidError{reason: reasonInvalidMetadata, err: err}
	}
	if err := validateSpec(job, gates); err != nil {
		return &invalidError{reason: reasonInvalidSpec, err: err}
	}
	if job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusWaiting && submissionMode(job) != rayv1.InteractiveMode {
		return &invalidError{reason: reasonInvalidStatus, err: kubeRayError("The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when SubmissionMode is not InteractiveMode")}
	}
	return nil
}

// failValidation makes the RayJob ValidationFailed with the error as its
// message, reports it, and stops: only a new spec can help.
func (r *Reconciler) failValidation(ctx context.Context, s *scope, err error) (ctrl.Result, error) {
	reason := reasonInvalidSpec
	var invalid *invalidError
	if errors.As(err, &invalid) {
		reason = invalid.reason
	}
	ctrl.LoggerFrom(ctx).Info("Invalid RayJob", "error", err.Error())
	r.event(s.job, corev1.EventTypeWarning, reason, actionValidate, "%s/%s: %v", s.job.Namespace, s.job.Name, err)
	s.job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusValidationFailed
	s.job.Status.Reason = rayv1.ValidationFailed
	s.job.Status.Message = err.Error()
	if writeErr := r.finishPass(ctx, s); writeErr != nil {
		return ctrl.Result{}, writeErr
	}
	return ctrl.Result{}, nil
}

// validateMetadata keeps the RayJob name usable in the names derived from it.
func validateMetadata(job *rayv1.RayJob) error {
	if len(job.Name) > maxRayJobNameLength {
		return kubeRayErrorf("The RayJob metadata is invalid: RayJob name should be no more than %d characters", maxRayJobNameLength)
	}
	if errs := k8svalidation.IsDNS1035Label(job.Name); len(errs) > 0 {
		return kubeRayErrorf("The RayJob metadata is invalid: RayJob name should be a valid DNS1035 label: %v", errs)
	}
	return nil
}

// specRule is one check of a RayJob spec; the first failing rule wins.
type specRule func(job *rayv1.RayJob, gates validation.FeatureGates) error

// specRules are KubeRay's RayJob spec rules, in KubeRay's order.
var specRules = []specRule{
	suspendRules,
	deletionRules,
	clusterSourceRules,
	modeRules,
	clusterSpecRules,
	limitRules,
}

// validateSpec runs specRules.
func validateSpec(job *rayv1.RayJob, gates validation.FeatureGates) error {
	for _, rule := range specRules {
		if err := rule(job, gates); err != nil {
			return err
		}
	}
	return nil
}

// suspendRules: suspension needs the cluster to be deleted at the end.
func suspendRules(job *rayv1.RayJob, _ validation.FeatureGates) error {
	if job.Spec.Suspend && !job.Spec.ShutdownAfterJobFinishes {
		return kubeRayError("The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended")
	}
	if job.Spec.TTLSecondsAfterFinished < 0 {
		return kubeRayError("The RayJob spec is invalid: TTLSecondsAfterFinished must be a non-negative integer")
	}
	return nil
}

// clusterSourceRules: either a cluster spec or a selected cluster, and what
// a selected cluster cannot do.
func clusterSourceRules(job *rayv1.RayJob, _ validation.FeatureGates) error {
	selector := usesClusterSelector(job)
	if job.Spec.Suspend && selector {
		return kubeRayError("The RayJob spec is invalid: the ClusterSelector mode doesn't support the suspend operation")
	}
	if job.Spec.RayClusterSpec == nil && !selector {
		return kubeRayError("The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set")
	}
	if !selector {
		return nil
	}
	if job.Spec.ClusterSelector[clusterSelectorKey] == "" {
		return kubeRayError("cluster name in ClusterSelector should not be empty")
	}
	if submissionMode(job) == rayv1.SidecarMode {
		return kubeRayError("ClusterSelector is not supported in SidecarMode")
	}
	if job.Spec.BackoffLimit != nil && *job.Spec.BackoffLimit > 0 {
		return kubeRayError("The RayJob spec is invalid: BackoffLimit is incompatible with ClusterSelector mode")
	}
	return nil
}

// modeRules: what InteractiveMode and SidecarMode cannot be combined with.
func modeRules(job *rayv1.RayJob, _ validation.FeatureGates) error {
	switch submissionMode(job) {
	case rayv1.InteractiveMode:
		// A retry would find spec.jobId still set and skip Waiting.
		if job.Spec.BackoffLimit != nil && *job.Spec.BackoffLimit > 0 {
			return kubeRayError("The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode")
		}
	case rayv1.SidecarMode:
		if job.Spec.SubmitterPodTemplate != nil {
			return kubeRayError("Currently, SidecarMode doesn't support SubmitterPodTemplate")
		}
		if job.Spec.SubmitterConfig != nil {
			return kubeRayError("Currently, SidecarMode doesn't support SubmitterConfig")
		}
		if spec := job.Spec.RayClusterSpec; spec != nil {
			policy := spec.HeadGroupSpec.Template.Spec.RestartPolicy
			if policy != "" && policy != corev1.RestartPolicyNever {
				return kubeRayError("restartPolicy for head Pod should be Never or unset when using SidecarMode")
			}
		}
	}
	return nil
}

// clusterSpecRules validates the embedded RayClusterSpec as a RayCluster's.
// KubeRay's ValidateRayJobSpec checks only the spec rules; the RayCluster
// controller later also refuses an upgradeStrategy on a RayJob's cluster,
// and the RayJob then waits in Initializing for a cluster that never comes.
// Here every RayCluster rule that follows from the RayJob is checked up
// front, against the cluster as the RayJob would create it.
func clusterSpecRules(job *rayv1.RayJob, gates validation.FeatureGates) error {
	if job.Spec.RayClusterSpec == nil {
		return nil
	}
	if opts := job.Spec.RayClusterSpec.AuthOptions; opts != nil && opts.EnableK8sTokenAuth != nil && *opts.EnableK8sTokenAuth {
		return kubeRayError("The RayJob spec is invalid: K8s token auth mode is currently not supported for RayJob")
	}
	if err := validation.RayClusterSpec(job.Spec.RayClusterSpec, job.Annotations, gates); err != nil {
		return kubeRayErrorf("The RayJob spec is invalid: %w", err)
	}
	created := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{rayv1.LabelOriginatedFromCRD: rayv1.KindRayJob}},
		Spec:       *job.Spec.RayClusterSpec,
	}
	if err := validation.RayClusterUpgradeOptions(created); err != nil {
		return kubeRayErrorf("The RayJob spec is invalid: %w", err)
	}
	return nil
}

// limitRules: the runtime env must parse and the limits be positive.
func limitRules(job *rayv1.RayJob, _ validation.FeatureGates) error {
	if job.Spec.RuntimeEnvYAML != "" {
		if _, err := dashboard.ParseRuntimeEnvYAML(job.Spec.RuntimeEnvYAML); err != nil {
			return kubeRayErrorf("The RayJob spec is invalid: %w", err)
		}
	}
	if v := job.Spec.ActiveDeadlineSeconds; v != nil && *v <= 0 {
		return kubeRayError("The RayJob spec is invalid: activeDeadlineSeconds must be a positive integer")
	}
	if v := job.Spec.PreRunningDeadlineSeconds; v != nil && *v <= 0 {
		return kubeRayError("The RayJob spec is invalid: preRunningDeadlineSeconds must be a positive integer")
	}
	if v := job.Spec.BackoffLimit; v != nil && *v < 0 {
		return kubeRayError("The RayJob spec is invalid: backoffLimit must be a positive integer")
	}
	return nil
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

// noGates is the gate set with every feature off.
type noGates struct{}

// Enabled reports false for every feature.
func (noGates) Enabled(featuregate.Feature) bool { return false }

// deletionPolicyOn reports the RayJobDeletionPolicy gate.
func deletionPolicyOn(gates validation.FeatureGates) bool {
	return gates.Enabled(features.RayJobDeletionPolicy)
}
