package raycluster

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// invalidError is a validation failure with the event reason to report it.
type invalidError struct {
	reason string
	what   string // "metadata" or "spec", for the event
	err    error
}

func (e *invalidError) Error() string { return e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// validateCluster runs the first three validation layers (user errors).
func (r *Reconciler) validateCluster(cluster *rayv1.RayCluster) error {
	if err := validation.RayClusterMetadata(cluster.ObjectMeta); err != nil {
		return &invalidError{reasonInvalidMetadata, "metadata", err}
	}
	if err := validation.RayClusterSpec(&cluster.Spec, cluster.Annotations, r.opts.Features); err != nil {
		return &invalidError{reasonInvalidSpec, "spec", err}
	}
	if err := validation.RayClusterUpgradeOptions(cluster); err != nil {
		return &invalidError{reasonInvalidSpec, "spec", err}
	}
	return nil
}

// validate checks the RayCluster in KubeRay's four layers and reports
// whether the pass must stop. An invalid object gets a Warning event and the
// ValidationFailed condition, and is not requeued: only an edit can fix it,
// and the edit triggers the next pass. An incoherent status is an error, so
// the pass is retried.
func (r *Reconciler) validate(ctx context.Context, cluster *rayv1.RayCluster) (bool, error) {
	err := r.validateCluster(cluster)
	var invalid *invalidError
	if errors.As(err, &invalid) {
		ctrl.LoggerFrom(ctx).Info("Invalid RayCluster", "reason", invalid.reason, "error", err.Error())
		r.event(cluster, corev1.EventTypeWarning, invalid.reason, actionValidate,
			"The RayCluster %s is invalid %s/%s: %v", invalid.what, cluster.Namespace, cluster.Name, err)
		return true, r.reportInvalid(ctx, cluster, invalid)
	}
	if err := validation.RayClusterStatus(&cluster.Status); err != nil {
		r.event(cluster, corev1.EventTypeWarning, reasonInvalidStatus, actionValidate,
			"The RayCluster status is invalid %s/%s, %v", cluster.Namespace, cluster.Name, err)
		return true, err
	}
	return false, nil
}

// reportInvalid sets the ValidationFailed condition, writing the status only
// when it changes, so repeated passes over the same invalid spec do not
// write (or requeue) again.
func (r *Reconciler) reportInvalid(ctx context.Context, cluster *rayv1.RayCluster, invalid *invalidError) error {
	s := newScope(cluster, r.opts.MaxPodWritesPerPass)
	status := cluster.Status.DeepCopy()
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               string(rayv1.RayClusterValidationFailed),
		Status:             metav1.ConditionTrue,
		Reason:             invalid.reason,
		Message:            invalid.Error(),
		ObservedGeneration: cluster.Generation,
		LastTransitionTime: metav1.NewTime(r.clock.Now()),
	})
	_, err := r.writeStatus(ctx, s, status)
	return err
}
