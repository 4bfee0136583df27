package rayjob

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// invalidError is a validation failure with the event reason to report it.
type invalidError struct {
	reason string
	err    error
}

func (e *invalidError) Error() string { return e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// validateRayJob checks metadata, spec and status, in KubeRay's order (the
// rules are in internal/validation, shared with RayCronJob's jobTemplate);
// each layer has its own event reason.
func validateRayJob(job *rayv1.RayJob, gates validation.FeatureGates) error {
	if err := validation.RayJobMetadata(job.ObjectMeta); err != nil {
		return &invalidError{reason: reasonInvalidMetadata, err: err}
	}
	if err := validation.RayJobSpec(&job.Spec, job.Annotations, gates); err != nil {
		return &invalidError{reason: reasonInvalidSpec, err: err}
	}
	if err := validation.RayJobStatus(job); err != nil {
		return &invalidError{reason: reasonInvalidStatus, err: err}
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
