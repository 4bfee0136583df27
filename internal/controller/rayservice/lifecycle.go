package rayservice

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/invalidspec"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/serveapps"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// ensureFinalizerStep is the first step of a pass (and of an invalid
// RayService's report, as KubeRay adds it before validating): a pass that
// adds the finalizer, or finds the object changed meanwhile, ends there
// with nothing of the status to write; the next starts from the updated
// object.
func (r *Reconciler) ensureFinalizerStep(ctx context.Context, s *scope) (passsteps.Result, error) {
	added, err := r.ensureFinalizer(ctx, s.rs)
	if added || apierrors.IsConflict(err) {
		s.original = s.rs.Status.DeepCopy()
		return passsteps.Result{Stop: true, RequeueAfter: r.opts.InFlightRequeue}, nil
	}
	return passsteps.Result{}, err
}

// ensureFinalizer adds ray.io/rayservice-finalizer; it reports whether it
// did.
func (r *Reconciler) ensureFinalizer(ctx context.Context, rs *rayv1.RayService) (bool, error) {
	if controllerutil.ContainsFinalizer(rs, rayv1.RayServiceFinalizer) {
		return false, nil
	}
	controllerutil.AddFinalizer(rs, rayv1.RayServiceFinalizer)
	if err := r.Client.Update(ctx, rs); err != nil {
		return false, fmt.Errorf("adding the finalizer: %w", err)
	}
	return true, nil
}

// finalize deletes every cluster of a deleted RayService at once (no
// deletion delay) and removes the finalizer when none is left. Services,
// the Gateway and the HTTPRoute go with the RayService through their owner
// references.
func (r *Reconciler) finalize(ctx context.Context, rs *rayv1.RayService) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(rs, rayv1.RayServiceFinalizer) {
		return ctrl.Result{}, nil
	}
	clusters, err := r.clusters.List(ctx, rs, rayv1.KindRayService)
	if err != nil {
		return ctrl.Result{}, err
	}
	for i := range clusters {
		if _, err := r.clusters.Delete(ctx, rs, client.ObjectKeyFromObject(&clusters[i])); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(clusters) > 0 {
		ctrl.LoggerFrom(ctx).Info("Waiting for the RayClusters of the deleted RayService to go", "count", len(clusters))
		return ctrl.Result{RequeueAfter: r.opts.InFlightRequeue}, nil
	}
	controllerutil.RemoveFinalizer(rs, rayv1.RayServiceFinalizer)
	r.serveBackoff.ForgetObject(client.ObjectKeyFromObject(rs))
	return ctrl.Result{}, ignoreConflict(client.IgnoreNotFound(r.Client.Update(ctx, rs)))
}

// validate checks the metadata, the spec, the serve config and, for
// incremental upgrades, their options.
func (r *Reconciler) validate(rs *rayv1.RayService) error {
	if err := validation.RayServiceMetadata(rs.ObjectMeta); err != nil {
		return invalidspec.New(reasonInvalidMetadata, err)
	}
	if err := validation.RayServiceSpec(rs, r.opts.Features); err != nil {
		return invalidspec.New(reasonInvalidSpec, err)
	}
	if err := serveapps.Validate(rs.Spec.ServeConfigV2); err != nil {
		return invalidspec.New(reasonInvalidSpec, fmt.Errorf("The RayService spec is invalid: %w", err)) //nolint:staticcheck // KubeRay's prefix
	}
	return nil
}

// failValidation reports an invalid RayService (invalidspec: a log line and
// a Warning event), and sets Ready False with reason ValidationFailed that
// users can wait on. It is not
// requeued: the next change of the object brings the next pass.
func (r *Reconciler) failValidation(ctx context.Context, s *scope, err error) (ctrl.Result, error) {
	invalidspec.Report(ctx, r.events, s.rs, rayv1.KindRayService, err, reasonInvalidSpec)
	conditions.MarkFalse(&s.rs.Status.Conditions, rayv1.RayServiceReady, rayv1.RayServiceValidationFailed, err.Error(), conditions.At(metav1.Time{Time: s.now}, s.rs.Generation))
	s.rs.Status.ObservedGeneration = s.rs.Generation
	return r.finishPass(ctx, s, passsteps.Result{Stop: true}, nil)
}
