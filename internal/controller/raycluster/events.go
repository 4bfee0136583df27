package raycluster

import (
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Event reasons. They are KubeRay's, so that alerts and `kubectl get events`
// filters written for KubeRay keep matching.
const (
	reasonInvalidSpec                   = rayv1.InvalidRayClusterSpec
	reasonInvalidMetadata               = rayv1.InvalidRayClusterMetadata
	reasonInvalidStatus                 = "InvalidRayClusterStatus"
	reasonCreatedService                = "CreatedService"
	reasonFailedToCreateService         = "FailedToCreateService"
	reasonCreatedIngress                = "CreatedIngress"
	reasonFailedToCreateIngress         = "FailedToCreateIngress"
	reasonCreatedRoute                  = "CreatedRoute"
	reasonFailedToCreateRoute           = "FailedToCreateRoute"
	reasonCreatedServiceAccount         = "CreatedServiceAccount"
	reasonFailedToCreateServiceAccount  = "FailedToCreateServiceAccount"
	reasonAutoscalerSANotFound          = "AutoscalerServiceAccountNotFound"
	reasonCreatedRole                   = "CreatedRole"
	reasonFailedToCreateRole            = "FailedToCreateRole"
	reasonCreatedRoleBinding            = "CreatedRoleBinding"
	reasonFailedToCreateRoleBinding     = "FailedToCreateRoleBinding"
	reasonCreatedSecret                 = "CreatedSecret"
	reasonFailedToCreateSecret          = "FailedToCreateSecret"
	reasonCreatedHeadPod                = "CreatedHeadPod"
	reasonFailedToCreateHeadPod         = "FailedToCreateHeadPod"
	reasonDeletedHeadPod                = "DeletedHeadPod"
	reasonFailedToDeleteHeadPod         = "FailedToDeleteHeadPod"
	reasonCreatedWorkerPod              = "CreatedWorkerPod"
	reasonFailedToCreateWorkerPod       = "FailedToCreateWorkerPod"
	reasonDeletedWorkerPod              = "DeletedWorkerPod"
	reasonFailedToDeleteWorkerPod       = "FailedToDeleteWorkerPod"
	reasonDeletedPod                    = "DeletedPod"
	reasonFailedToDeletePodCollection   = "FailedToDeletePodCollection"
	reasonFailedToDeleteWorkerPodColl   = "FailedToDeleteWorkerPodCollection"
	reasonCreatedPVC                    = "CreatedPVC"
	reasonFailedToCreatePVC             = "FailedToCreatePVC"
	reasonCreatedRedisCleanupJob        = "CreatedRedisCleanupJob"
	reasonFailedToCreateRedisCleanupJob = "FailedToCreateRedisCleanupJob"
	reasonRedisCleanupJobFailed         = "RedisCleanupJobFailed"
	reasonForceDeletedStuckCluster      = "ForceDeletedStuckCluster"
	reasonCreatedNetworkPolicy          = "CreatedNetworkPolicy"
	reasonFailedToCreateNetworkPolicy   = "FailedToCreateNetworkPolicy"
	reasonUpdatedNetworkPolicy          = "UpdatedNetworkPolicy"
	reasonFailedToUpdateNetworkPolicy   = "FailedToUpdateNetworkPolicy"
	reasonDeletedNetworkPolicy          = "DeletedNetworkPolicy"
	reasonFailedToDeleteNetworkPolicy   = "FailedToDeleteNetworkPolicy"
	reasonNetworkPolicyNameCollision    = "NetworkPolicyNameCollision"
	reasonMTLSFailedToReconcile         = "MTLSFailedToReconcile"
	reasonMTLSCertificatesUpdated       = "MTLSCertificatesUpdated"
	reasonMTLSPKIReady                  = "MTLSPKIReady"
	reasonMTLSCertsNotReady             = "MTLSCertsNotReady"
	reasonMTLSCertificateExpiringSoon   = "MTLSCertificateExpiringSoon"
	// reasonFailedBatchScheduling is this operator's: KubeRay records no
	// event when its batch scheduler plugin fails.
	reasonFailedBatchScheduling = "FailedBatchScheduling"
)

// Event actions (the events.k8s.io "action" field).
const (
	actionValidate  = "Validate"
	actionCreate    = "Create"
	actionUpdate    = "Update"
	actionDelete    = "Delete"
	actionFinalize  = "Finalize"
	actionReconcile = "Reconcile"
)
