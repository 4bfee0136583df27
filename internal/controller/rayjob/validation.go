package rayjob

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/invalidspec"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// validateRayJob checks metadata, spec and status, in KubeRay's order (the
// rules are in internal/validation, shared with RayCronJob's jobTemplate);
// each layer has its own event reason.
func validateRayJob(job *rayv1.RayJob, gates validation.FeatureGates) error {
	if err := validation.RayJobMetadata(job.ObjectMeta); err != nil {
		return invalidspec.New(reasonInvalidMetadata, err)
	}
	if err := validation.RayJobSpec(&job.Spec, job.Annotations, gates); err != nil {
		return invalidspec.New(reasonInvalidSpec, err)
	}
	if err := validation.RayJobStatus(job); err != nil {
		return invalidspec.New(reasonInvalidStatus, err)
	}
	return nil
}

// failValidation makes the RayJob ValidationFailed with the error as its
// message, reports it, and stops: only a new spec can help.
func (r *Reconciler) failValidation(ctx context.Context, job *rayv1.RayJob, err error) (ctrl.Result, error) {
	s := newScope(job)
	invalidspec.Report(ctx, r.events, s.job, rayv1.KindRayJob, err, reasonInvalidSpec)
	s.job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusValidationFailed
	s.job.Status.Reason = rayv1.ValidationFailed
	s.job.Status.Message = err.Error()
	return r.finishPass(ctx, s, passsteps.Result{Stop: true}, nil)
}
