package rayjob

import (
	"github.com/ray-operator/ray-operator/internal/clusterowner"
)

// Event reasons. Those KubeRay also emits keep KubeRay's names. The
// RayCluster and Service events of a RayJob are clusterowner's, which makes
// those objects.
const (
	reasonStatusChanged                 = "JobDeploymentStatusChanged"
	reasonInvalidSpec                   = "InvalidRayJobSpec"
	reasonInvalidMetadata               = "InvalidRayJobMetadata"
	reasonInvalidStatus                 = "InvalidRayJobStatus"
	reasonRayClusterNotFound            = "RayClusterNotFound"
	reasonCreatedSubmitter              = "CreatedRayJobSubmitter"
	reasonFailedToCreateSubmitter       = "FailedToCreateRayJobSubmitter"
	reasonDeletedSubmitter              = "DeletedRayJobSubmitter"
	reasonFailedToDeleteSubmitter       = "FailedToDeleteRayJobSubmitter"
	reasonSubmittedJob                  = "SubmittedRayJob"
	reasonFailedToSubmitJob             = "FailedToSubmitRayJob"
	reasonStoppedJob                    = "StoppedRayJob"
	reasonFailedToStopJob               = "FailedToStopRayJob"
	reasonDeletedRayJob                 = "DeletedRayJob"
	reasonFailedToDeleteRayJob          = "FailedToDeleteRayJob"
	reasonSuspendedWorkerGroups         = clusterowner.ReasonUpdatedRayCluster
	reasonFailedToSuspendWorkerGroup    = clusterowner.ReasonFailedToUpdateRayCluster
	reasonAuthSecretNotFound            = "AuthSecretNotFound"
	reasonBatchSchedulerCleanedUp       = "BatchSchedulerCleanedUp"
	reasonFailedToCleanupBatchScheduler = "FailedToCleanupBatchScheduler"
	// reasonFailedToGetJobInfo is this operator's: KubeRay only logs a
	// failed job info request.
	reasonFailedToGetJobInfo = "FailedToGetRayJobInfo"
	// reasonFailedBatchScheduling is this operator's: KubeRay only logs a
	// batch scheduler plugin's failure.
	reasonFailedBatchScheduling = "FailedBatchScheduling"
)

// Event actions (the events.k8s.io "action" field).
const (
	actionTransition = "Transition"
	actionCreate     = "Create"
	actionUpdate     = "Update"
	actionDelete     = "Delete"
	actionSubmit     = "Submit"
	actionStop       = "Stop"
	actionGet        = "Get"
)
