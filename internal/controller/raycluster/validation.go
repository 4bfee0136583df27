package raycluster

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/invalidspec"
	"github.com/ray-operator/ray-operator/internal/raytls"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// Prefixes of the invalid-spec events' notes, KubeRay's.
const (
	invalidMetadataNote = "The RayCluster metadata is invalid "
	invalidSpecNote     = "The RayCluster spec is invalid "
)

// validateCluster runs the first three validation layers (user errors).
func (r *Reconciler) validateCluster(cluster *rayv1.RayCluster) error {
	if err := validation.RayClusterMetadata(cluster.ObjectMeta); err != nil {
		return &invalidspec.Error{Reason: reasonInvalidMetadata, NotePrefix: invalidMetadataNote, Err: err}
	}
	if err := validation.RayClusterSpec(&cluster.Spec, cluster.Annotations, r.opts.Features); err != nil {
		return &invalidspec.Error{Reason: reasonInvalidSpec, NotePrefix: invalidSpecNote, Err: err}
	}
	if r.opts.CertManagerMissing && r.mtlsEnabled(cluster) && r.mtlsSource(cluster) == raytls.SourceCertManager {
		return &invalidspec.Error{Reason: reasonInvalidSpec, NotePrefix: invalidSpecNote, Err: errNoCertManager}
	}
	if err := validation.RayClusterUpgradeOptions(cluster); err != nil {
		return &invalidspec.Error{Reason: reasonInvalidSpec, NotePrefix: invalidSpecNote, Err: err}
	}
	return nil
}

// validate checks the RayCluster in KubeRay's four layers: the first
// three (user errors) are an *invalidspec.Error, the fourth (an incoherent
// status) is not.
func (r *Reconciler) validate(cluster *rayv1.RayCluster) error {
	if err := r.validateCluster(cluster); err != nil {
		return err
	}
	return validation.RayClusterStatus(&cluster.Status)
}

// invalid reports what validate refused and ends the pass. An invalid
// object gets a Warning event and the ValidationFailed condition, and is
// not requeued: only an edit can fix it, and the edit triggers the next
// pass. An incoherent status is an error, so the pass is retried.
func (r *Reconciler) invalid(ctx context.Context, cluster *rayv1.RayCluster, err error) (ctrl.Result, error) {
	var invalid *invalidspec.Error
	if errors.As(err, &invalid) {
		invalidspec.Report(ctx, r.events, cluster, rayv1.KindRayCluster, err, reasonInvalidSpec)
		return ctrl.Result{}, r.reportInvalid(ctx, cluster, invalid)
	}
	r.events.Eventf(cluster, nil, corev1.EventTypeWarning, reasonInvalidStatus, actionValidate,
		"The RayCluster status is invalid %s/%s, %v", cluster.Namespace, cluster.Name, err)
	return ctrl.Result{}, err
}

// reportInvalid sets the ValidationFailed condition, writing the status only
// when it changes, so repeated passes over the same invalid spec do not
// write (or requeue) again.
func (r *Reconciler) reportInvalid(ctx context.Context, cluster *rayv1.RayCluster, invalid *invalidspec.Error) error {
	s := newScope(cluster, r.opts.MaxPodWritesPerPass)
	status := cluster.Status.DeepCopy()
	conditions.MarkTrue(&status.Conditions, rayv1.RayClusterValidationFailed, invalid.Reason, invalid.Error(),
		conditions.At(metav1.NewTime(r.Clock.Now()), cluster.Generation))
	_, err := r.writeStatus(ctx, s, status)
	return err
}
