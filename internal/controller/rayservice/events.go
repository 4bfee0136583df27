package rayservice

import (
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Event reasons KubeRay's RayService controller emits (those about
// clusters and Services come from clusterowner).
const (
	reasonInvalidSpec                     = "InvalidRayServiceSpec"
	reasonInvalidMetadata                 = "InvalidRayServiceMetadata"
	reasonInitializingTimeout             = "RayServiceInitializingTimeout"
	reasonUpdatedServeApplications        = "UpdatedServeApplications"
	reasonFailedToUpdateServeApplications = string(rayv1.FailedToUpdateServeApplications)
	reasonUpdatedHeadPodServeLabel        = "UpdatedHeadPodServeLabel"
	reasonFailedToUpdateHeadPodServeLabel = "FailedToUpdateHeadPodServeLabel"
	reasonFailedToUpdateRayCluster        = "FailedToUpdateRayCluster"
	reasonRollbackImpossible              = "RollbackImpossible"
	reasonUpdatedServeTargetCapacity      = "UpdatedServeTargetCapacity"
	reasonFailedToUpdateTargetCapacity    = string(rayv1.FailedToUpdateTargetCapacity)
	reasonCreatedGateway                  = "CreatedGateway"
	reasonUpdatedGateway                  = "UpdatedGateway"
	reasonFailedToCreateGateway           = "FailedToCreateGateway"
	reasonFailedToUpdateGateway           = "FailedToUpdateGateway"
	reasonCreatedHTTPRoute                = "CreatedHTTPRoute"
	reasonUpdatedHTTPRoute                = "UpdatedHTTPRoute"
	reasonFailedToCreateHTTPRoute         = "FailedToCreateHTTPRoute"
	reasonFailedToUpdateHTTPRoute         = "FailedToUpdateHTTPRoute"
	// reasonPendingClusterTimeout (not KubeRay's): an upgrade's pending
	// cluster was deleted after spec.upgradeStrategy.pendingClusterTimeoutSeconds.
	reasonPendingClusterTimeout = string(rayv1.PendingClusterTimeout)
)

// Event actions.
const (
	actionReconcile = "Reconcile"
	actionUpdate    = "Update"
	actionDelete    = "Delete"
)
