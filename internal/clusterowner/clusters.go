package clusterowner

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
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
	ReasonDeletedService           = "DeletedService"
	ReasonFailedToDeleteService    = "FailedToDeleteService"

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
	return c.writer().Create(ctx, owner, cluster, clusterEvent(childwrite.Create, cluster),
		childwrite.AlreadyExistsIf(func(ctx context.Context) bool { return c.controlledAlready(ctx, owner, cluster) }))
}

// clusterReasons are KubeRay's event reasons of an owner's writes of its
// RayClusters.
var clusterReasons = childwrite.Reasons{
	childwrite.Create: {ReasonCreatedRayCluster, ReasonFailedToCreateRayCluster},
	childwrite.Update: {ReasonUpdatedRayCluster, ReasonFailedToUpdateRayCluster},
	childwrite.Delete: {ReasonDeletedRayCluster, ReasonFailedToDeleteRayCluster},
}

// clusterEvent is KubeRay's event of the write v of cluster, one of its
// owner's: "Created RayCluster ns/name".
func clusterEvent(v childwrite.Verb, cluster *rayv1.RayCluster) childwrite.Event {
	return clusterReasons.Event(v, childwrite.Noun("RayCluster", cluster))
}

func (c Clusters) writer() childwrite.Writer {
	return childwrite.Writer{Client: c.Client, Events: c.Events}
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
	return c.writer().Update(ctx, owner, cluster, clusterEvent(childwrite.Update, cluster))
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
	err = c.writer().Delete(ctx, owner, cluster, clusterEvent(childwrite.Delete, cluster),
		childwrite.DeleteOptions(client.PropagationPolicy(metav1.DeletePropagationBackground)))
	return false, err
}
