package clusterowner

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/eventrecord"
)

// Event reasons and actions on the owner, as KubeRay names them.
const (
	ReasonCreatedRayCluster        = "CreatedRayCluster"
	ReasonFailedToCreateRayCluster = "FailedToCreateRayCluster"
	ReasonUpdatedRayCluster        = "UpdatedRayCluster"
	ReasonFailedToUpdateRayCluster = "FailedToUpdateRayCluster"
	ReasonDeletedRayCluster        = "DeletedRayCluster"
	ReasonFailedToDeleteRayCluster = "FailedToDeleteRayCluster"
	ReasonCreatedService           = "CreatedService"
	ReasonFailedToCreateService    = "FailedToCreateService"
	ReasonUpdatedService           = "UpdatedService"
	ReasonFailedToUpdateService    = "FailedToUpdateService"

	ActionCreate = "Create"
	ActionUpdate = "Update"
	ActionDelete = "Delete"
)

// Clusters does what an owner does to its clusters, with the events KubeRay
// records on the owner. The zero Events records nothing.
type Clusters struct {
	// Client reads and writes RayClusters and Services.
	Client client.Client
	// Events records events on the owner; its zero value records none.
	Events eventrecord.Recorder
	// Live reads a cluster past the cache when its create finds it exists
	// already. nil means Client.
	Live client.Reader
}

// Get returns the cluster by key, or nil when it does not exist.
func (c Clusters) Get(ctx context.Context, key types.NamespacedName) (*rayv1.RayCluster, error) {
	cluster := &rayv1.RayCluster{}
	if err := c.Client.Get(ctx, key, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting RayCluster %s: %w", key, err)
	}
	return cluster, nil
}

// Create creates cluster for owner. A cluster of that name the owner
// already controls is taken as created (cluster becomes it, and no event is
// recorded): an earlier pass created it and the cache does not show it yet.
func (c Clusters) Create(ctx context.Context, owner runtime.Object, cluster *rayv1.RayCluster) error {
	key := client.ObjectKeyFromObject(cluster)
	if err := c.Client.Create(ctx, cluster); err != nil {
		if apierrors.IsAlreadyExists(err) && c.controlledAlready(ctx, owner, cluster) {
			ctrl.LoggerFrom(ctx).Info("RayCluster created by an earlier pass, not cached yet", "rayCluster", key)
			return nil
		}
		c.event(owner, corev1.EventTypeWarning, ReasonFailedToCreateRayCluster, ActionCreate, "Failed to create RayCluster %s: %v", key, err)
		return fmt.Errorf("creating RayCluster %s: %w", key, err)
	}
	ctrl.LoggerFrom(ctx).Info("Created RayCluster", "rayCluster", key)
	c.event(owner, corev1.EventTypeNormal, ReasonCreatedRayCluster, ActionCreate, "Created RayCluster %s", key)
	return nil
}

// controlledAlready reports whether the stored cluster of cluster's name is
// controlled by owner, and if so makes cluster that stored one. A cluster
// that cannot be read, or that is not the owner's, is not.
func (c Clusters) controlledAlready(ctx context.Context, owner runtime.Object, cluster *rayv1.RayCluster) bool {
	ownerMeta, err := meta.Accessor(owner)
	if err != nil {
		return false
	}
	live := c.Live
	if live == nil {
		live = c.Client
	}
	stored := &rayv1.RayCluster{}
	if err := live.Get(ctx, client.ObjectKeyFromObject(cluster), stored); err != nil {
		return false
	}
	ref := metav1.GetControllerOf(stored)
	if ref == nil || ref.UID != ownerMeta.GetUID() {
		return false
	}
	stored.DeepCopyInto(cluster)
	return true
}

// Update writes cluster, changed by owner.
func (c Clusters) Update(ctx context.Context, owner runtime.Object, cluster *rayv1.RayCluster) error {
	key := client.ObjectKeyFromObject(cluster)
	if err := c.Client.Update(ctx, cluster); err != nil {
		c.event(owner, corev1.EventTypeWarning, ReasonFailedToUpdateRayCluster, ActionUpdate, "Failed to update RayCluster %s: %v", key, err)
		return fmt.Errorf("updating RayCluster %s: %w", key, err)
	}
	ctrl.LoggerFrom(ctx).Info("Updated RayCluster", "rayCluster", key)
	c.event(owner, corev1.EventTypeNormal, ReasonUpdatedRayCluster, ActionUpdate, "Updated RayCluster %s", key)
	return nil
}

// List returns the clusters owner (of kind ownerKind) created, by their
// ray.io/originated-from-* labels.
func (c Clusters) List(ctx context.Context, owner client.Object, ownerKind string) ([]rayv1.RayCluster, error) {
	list := &rayv1.RayClusterList{}
	if err := c.Client.List(ctx, list, client.InNamespace(owner.GetNamespace()), OwnedBy(owner, ownerKind)); err != nil {
		return nil, fmt.Errorf("listing the RayClusters of %s %s/%s: %w", ownerKind, owner.GetNamespace(), owner.GetName(), err)
	}
	return list.Items, nil
}

// Delete deletes the cluster by key, in the background (its Pods go after
// it). It reports true once the cluster is gone, so that callers can wait
// for its Pods to be released; a cluster that is already terminating is not
// deleted again.
func (c Clusters) Delete(ctx context.Context, owner runtime.Object, key types.NamespacedName) (bool, error) {
	cluster, err := c.Get(ctx, key)
	if err != nil || cluster == nil {
		return cluster == nil && err == nil, err
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return false, nil
	}
	if err := c.Client.Delete(ctx, cluster, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		c.event(owner, corev1.EventTypeWarning, ReasonFailedToDeleteRayCluster, ActionDelete, "Failed to delete RayCluster %s: %v", key, err)
		return false, fmt.Errorf("deleting RayCluster %s: %w", key, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted RayCluster", "rayCluster", key)
	c.event(owner, corev1.EventTypeNormal, ReasonDeletedRayCluster, ActionDelete, "Deleted RayCluster %s", key)
	return false, nil
}

func (c Clusters) event(obj runtime.Object, eventType, reason, action, note string, args ...any) {
	c.Events.Eventf(obj, nil, eventType, reason, action, note, args...)
}
