package raycluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/gcsstorage"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

var gcsPVCEvents = childEvents{"GCS storage PVC", reasonCreatedPVC, reasonFailedToCreatePVC}

// reconcileGCSStoragePVC provides the claim of the embedded RocksDB GCS
// store before the head Pod that mounts it. A user's storage.claimName is
// only looked up: a missing one is reported, never created. The
// operator-managed <cluster>-gcs-pvc is created, or adopted when it exists
// (a Retain cluster recreated under the same name gets its data back); an
// existing claim is never resized or recreated: a difference from the spec
// is reported with a warning, as KubeRay does. Its owner reference follows
// storage.deletionPolicy.
func (r *Reconciler) reconcileGCSStoragePVC(ctx context.Context, s *scope) (passsteps.Result, error) {
	c := s.cluster
	if !gcsstorage.Embedded(c) {
		return passsteps.Result{}, nil
	}
	name := gcsstorage.ClaimName(c)
	existing := &corev1.PersistentVolumeClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, existing)
	if gcsstorage.UserClaim(c) {
		if apierrors.IsNotFound(err) {
			r.events.Eventf(c, nil, corev1.EventTypeWarning, reasonFailedToCreatePVC, actionValidate,
				"GcsFaultToleranceOptions.Storage.ClaimName %q not found in namespace %s; the head Pod will not start until it exists",
				name, c.Namespace)
			return passsteps.Result{}, nil
		}
		return passsteps.Result{}, err
	}
	switch {
	case apierrors.IsNotFound(err):
		return passsteps.Result{}, r.createGCSStoragePVC(ctx, s)
	case err != nil:
		return passsteps.Result{}, err
	}
	if drift := gcsstorage.Drift(gcsstorage.BuildPVC(c), existing); drift != "" {
		r.events.Eventf(c, nil, corev1.EventTypeWarning, reasonFailedToCreatePVC, actionUpdate,
			"GCS storage PVC %s/%s already exists and cannot be reconfigured in place (%s); delete the PVC to recreate it with the new settings",
			existing.Namespace, existing.Name, drift)
	}
	return passsteps.Result{}, r.applyGCSStorageDeletionPolicy(ctx, s, existing)
}

func (r *Reconciler) createGCSStoragePVC(ctx context.Context, s *scope) error {
	pvc := gcsstorage.BuildPVC(s.cluster)
	if _, err := gcsstorage.ApplyDeletionPolicy(s.cluster, pvc); err != nil {
		return err
	}
	return r.createChild(ctx, s, pvc, gcsPVCEvents)
}

// applyGCSStorageDeletionPolicy adds or removes the cluster's owner
// reference on an existing operator-managed claim, so that a changed
// deletionPolicy takes effect.
func (r *Reconciler) applyGCSStorageDeletionPolicy(ctx context.Context, s *scope, pvc *corev1.PersistentVolumeClaim) error {
	changed, err := gcsstorage.ApplyDeletionPolicy(s.cluster, pvc)
	if err != nil || !changed {
		return err
	}
	// The owner reference follows the deletion policy; KubeRay records no
	// event for it.
	return r.Children().Update(ctx, s.cluster, pvc, childwrite.Event{})
}
