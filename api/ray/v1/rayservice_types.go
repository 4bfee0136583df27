package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceStatus is the legacy readiness summary of a RayService.
type ServiceStatus string

// Values of ServiceStatus. "Running" is what ready used to be called; the
// RayServiceReady condition carries the same meaning.
const (
	Running    ServiceStatus = "Running"
	NotRunning ServiceStatus = ""
)

// RayServiceUpgradeType is how a RayService moves to a changed cluster spec.
type RayServiceUpgradeType string

// Values of RayServiceUpgradeType.
const (
	// RayServiceNewClusterWithIncrementalUpgrade brings up a new cluster and
	// shifts traffic to it step by step through the Gateway API.
	RayServiceNewClusterWithIncrementalUpgrade RayServiceUpgradeType = "NewClusterWithIncrementalUpgrade"
	// RayServiceNewCluster brings up a new cluster and switches all traffic to
	// it once it is ready.
	RayServiceNewCluster RayServiceUpgradeType = "NewCluster"
	// RayServiceUpgradeNone creates no new cluster on a spec change.
	RayServiceUpgradeNone RayServiceUpgradeType = "None"
)

// Serve application statuses, as Ray Serve reports them.
const (
	ApplicationStatusNotStarted   = "NOT_STARTED"
	ApplicationStatusDeploying    = "DEPLOYING"
	ApplicationStatusRunning      = "RUNNING"
	ApplicationStatusDeployFailed = "DEPLOY_FAILED"
	ApplicationStatusDeleting     = "DELETING"
	ApplicationStatusUnhealthy    = "UNHEALTHY"
)

// Serve deployment statuses, as Ray Serve reports them.
const (
	DeploymentStatusUpdating  = "UPDATING"
	DeploymentStatusHealthy   = "HEALTHY"
	DeploymentStatusUnhealthy = "UNHEALTHY"
)

// ClusterUpgradeOptions tunes the NewClusterWithIncrementalUpgrade strategy.
type ClusterUpgradeOptions struct {
	// MaxSurgePercent is how much serving capacity, in percent, the new cluster
	// adds per step.
	// +kubebuilder:default:=100
	MaxSurgePercent *int32 `json:"maxSurgePercent,omitempty"`
	// StepSizePercent is how much traffic, in percent, moves per step; at most
	// MaxSurgePercent.
	StepSizePercent *int32 `json:"stepSizePercent"`
	// IntervalSeconds is the pause between steps.
	IntervalSeconds *int32 `json:"intervalSeconds"`
	// GatewayClassName is the GatewayClass of the Gateway the operator creates.
	GatewayClassName string `json:"gatewayClassName"`
}

// RayServiceUpgradeStrategy is how a RayService upgrades its cluster.
type RayServiceUpgradeStrategy struct {
	// Type is NewCluster (the default), NewClusterWithIncrementalUpgrade or None.
	// +optional
	Type *RayServiceUpgradeType `json:"type,omitempty"`
	// ClusterUpgradeOptions configures NewClusterWithIncrementalUpgrade; it needs
	// the RayServiceIncrementalUpgrade feature gate.
	ClusterUpgradeOptions *ClusterUpgradeOptions `json:"clusterUpgradeOptions,omitempty"`
	// PendingClusterTimeoutSeconds (not a KubeRay field) bounds an upgrade:
	// a pending cluster that does not take over the traffic within this many
	// seconds is deleted and the active cluster keeps serving. Unset: no
	// bound (KubeRay waits for ever).
	// +kubebuilder:validation:Minimum=1
	// +optional
	PendingClusterTimeoutSeconds *int32 `json:"pendingClusterTimeoutSeconds,omitempty"`
	// PendingClusterRetryBackoffSeconds (not a KubeRay field) is how long
	// after an abandoned upgrade the same spec is tried again; doubled for
	// each further abandonment of that spec, at most one hour. Unset: only a
	// spec change starts a new attempt. Needs pendingClusterTimeoutSeconds.
	// +kubebuilder:validation:Minimum=1
	// +optional
	PendingClusterRetryBackoffSeconds *int32 `json:"pendingClusterRetryBackoffSeconds,omitempty"`
}

// RayServiceSpec is the desired state of a RayService.
type RayServiceSpec struct {
	// RayClusterDeletionDelaySeconds is how long an old cluster is kept after
	// traffic left it (60 when unset).
	// +kubebuilder:validation:Minimum=0
	// +optional
	RayClusterDeletionDelaySeconds *int32 `json:"rayClusterDeletionDelaySeconds,omitempty"`
	// ServiceUnhealthySecondThreshold is accepted for compatibility and ignored.
	// +optional
	ServiceUnhealthySecondThreshold *int32 `json:"serviceUnhealthySecondThreshold,omitempty"`
	// DeploymentUnhealthySecondThreshold is accepted for compatibility and ignored.
	// +optional
	DeploymentUnhealthySecondThreshold *int32 `json:"deploymentUnhealthySecondThreshold,omitempty"`
	// ServeService overrides parts of the Service that selects Pods serving traffic.
	// +optional
	ServeService *corev1.Service `json:"serveService,omitempty"`
	// UpgradeStrategy is how the cluster is replaced on a spec change.
	// +optional
	UpgradeStrategy *RayServiceUpgradeStrategy `json:"upgradeStrategy,omitempty"`
	// ManagedBy names the controller responsible for this RayService; see
	// RayClusterSpec.ManagedBy. It cannot change once set.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the managedBy field is immutable"
	// +kubebuilder:validation:XValidation:rule="self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue']",message="the managedBy field value must be either 'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`
	// ServeConfigV2 is the Ray Serve config (applications and deployments) as
	// YAML text.
	// +optional
	ServeConfigV2 string `json:"serveConfigV2,omitempty"`
	// RayClusterSpec is the cluster that runs Serve.
	RayClusterSpec RayClusterSpec `json:"rayClusterConfig"`
	// ExcludeHeadPodFromServeSvc keeps the head Pod out of the serve Service.
	// +optional
	ExcludeHeadPodFromServeSvc bool `json:"excludeHeadPodFromServeSvc,omitempty"`
	// Suspend deletes everything the RayService owns while true; setting it
	// back to false recreates it.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// RayServiceStatuses is what the operator observed about a RayService.
type RayServiceStatuses struct {
	// Conditions are the detailed observations (see RayServiceConditionType).
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// LastUpdateTime is when the status was last written.
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// ServiceStatus is the legacy readiness summary; the Ready condition
	// supersedes it.
	// +optional
	ServiceStatus ServiceStatus `json:"serviceStatus,omitempty"`
	// ActiveServiceStatus describes the cluster serving traffic.
	// +optional
	ActiveServiceStatus RayServiceStatus `json:"activeServiceStatus,omitempty"`
	// PendingServiceStatus describes the cluster being prepared for an upgrade.
	// +optional
	PendingServiceStatus RayServiceStatus `json:"pendingServiceStatus,omitempty"`
	// NumServeEndpoints counts Pods selected by the serve Service.
	// +optional
	NumServeEndpoints int32 `json:"numServeEndpoints,omitempty"`
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// UpgradeAttempt (not a KubeRay field) times the upgrade in progress and
	// remembers the last one abandoned, when
	// spec.upgradeStrategy.pendingClusterTimeoutSeconds is set.
	// +optional
	UpgradeAttempt *UpgradeAttempt `json:"upgradeAttempt,omitempty"`
}

// UpgradeAttempt is the state of an upgrade bounded by
// spec.upgradeStrategy.pendingClusterTimeoutSeconds, kept in status so an
// operator restart neither restarts nor forgets it.
type UpgradeAttempt struct {
	// RayClusterName is the pending cluster being timed ("" when none).
	// +optional
	RayClusterName string `json:"rayClusterName,omitempty"`
	// StartTime is when the operator first saw RayClusterName pending.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// AbandonedClusterSpecHash is the cluster spec hash of the last
	// abandoned pending cluster.
	// +optional
	AbandonedClusterSpecHash string `json:"abandonedClusterSpecHash,omitempty"`
	// AbandonedRayClusterName is the last abandoned pending cluster.
	// +optional
	AbandonedRayClusterName string `json:"abandonedRayClusterName,omitempty"`
	// AbandonedTime is when it was abandoned.
	// +optional
	AbandonedTime *metav1.Time `json:"abandonedTime,omitempty"`
	// NextAttemptTime is when the abandoned spec is tried again (unset: only
	// a spec change starts a new attempt).
	// +optional
	NextAttemptTime *metav1.Time `json:"nextAttemptTime,omitempty"`
	// Abandoned counts the consecutive abandoned attempts of
	// AbandonedClusterSpecHash.
	// +optional
	Abandoned int32 `json:"abandoned,omitempty"`
}

// RayServiceStatus describes one of the clusters of a RayService.
type RayServiceStatus struct {
	// Applications maps Serve application names to their status.
	// +optional
	Applications map[string]AppStatus `json:"applicationStatuses,omitempty"`
	// TargetCapacity is the Serve target_capacity percentage applied to this cluster.
	// +optional
	TargetCapacity *int32 `json:"targetCapacity,omitempty"`
	// TrafficRoutedPercent is the share of traffic routed to this cluster.
	// +optional
	TrafficRoutedPercent *int32 `json:"trafficRoutedPercent,omitempty"`
	// LastTrafficMigratedTime is when TrafficRoutedPercent last changed.
	// +optional
	LastTrafficMigratedTime *metav1.Time `json:"lastTrafficMigratedTime,omitempty"`
	// +optional
	RayClusterName string `json:"rayClusterName,omitempty"`
	// +optional
	RayClusterStatus RayClusterStatus `json:"rayClusterStatus,omitempty"`
}

// AppStatus is the status of one Serve application.
type AppStatus struct {
	// Deployments maps deployment names to their status.
	// +optional
	Deployments map[string]ServeDeploymentStatus `json:"serveDeploymentStatuses,omitempty"`
	// +optional
	Status string `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ServeDeploymentStatus is the status of one Serve deployment.
type ServeDeploymentStatus struct {
	// +optional
	Status string `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

type (
	// RayServiceConditionType names a condition of a RayService.
	RayServiceConditionType string
	// RayServiceConditionReason is the reason of a RayService condition.
	RayServiceConditionReason string
)

// Condition types of a RayService.
const (
	// RayServiceReady: requests can be sent and at least one Pod serves them.
	RayServiceReady RayServiceConditionType = "Ready"
	// UpgradeInProgress: a pending cluster exists for a zero-downtime upgrade.
	UpgradeInProgress RayServiceConditionType = "UpgradeInProgress"
	// RollbackInProgress: an incremental upgrade is moving traffic back to
	// the active cluster because the spec returned to it (or changed again).
	RollbackInProgress RayServiceConditionType = "RollbackInProgress"
	// RayServiceSuspending: spec.suspend is deleting what the RayService owns.
	RayServiceSuspending RayServiceConditionType = "Suspending"
	// RayServiceSuspended: everything the RayService owns is deleted.
	RayServiceSuspended RayServiceConditionType = "Suspended"
	// ServeRequestsFailing (not a KubeRay condition): a request of the
	// operator to Ray Serve on the active or pending cluster keeps failing
	// (its dashboard's Serve API, or the health check of the head's Serve
	// proxy once it had answered). The message says what failed and when it
	// is tried again; False once every request succeeds again.
	ServeRequestsFailing RayServiceConditionType = "ServeRequestsFailing"
	// UpgradeAbandoned (not a KubeRay condition): True with reason
	// PendingClusterTimeout once a pending cluster was deleted because it
	// did not take over within spec.upgradeStrategy.pendingClusterTimeoutSeconds;
	// False with reason UpgradeRetried while a new attempt runs. Removed once
	// the spec matches the serving cluster again.
	UpgradeAbandoned RayServiceConditionType = "UpgradeAbandoned"
)

// Reasons of the UpgradeAbandoned condition.
const (
	PendingClusterTimeout RayServiceConditionReason = "PendingClusterTimeout"
	UpgradeRetried        RayServiceConditionReason = "UpgradeRetried"
)

// Reasons of RayService conditions.
const (
	RayServiceInitializing         RayServiceConditionReason = "Initializing"
	RayServiceInitializingTimeout  RayServiceConditionReason = "InitializingTimeout"
	ZeroServeEndpoints             RayServiceConditionReason = "ZeroServeEndpoints"
	NonZeroServeEndpoints          RayServiceConditionReason = "NonZeroServeEndpoints"
	BothActivePendingClustersExist RayServiceConditionReason = "BothActivePendingClustersExist"
	NoPendingCluster               RayServiceConditionReason = "NoPendingCluster"
	NoActiveCluster                RayServiceConditionReason = "NoActiveCluster"
	RayServiceValidationFailed     RayServiceConditionReason = "ValidationFailed"
	DesiredClusterSpecChanged      RayServiceConditionReason = "DesiredClusterSpecChanged"
	SuspendRequested               RayServiceConditionReason = "SuspendRequested"
	SuspendInProgress              RayServiceConditionReason = "SuspendInProgress"
	SuspendComplete                RayServiceConditionReason = "SuspendComplete"
	RayServiceResumed              RayServiceConditionReason = "RayServiceResumed"
)

// Reasons of the ServeRequestsFailing condition: the request that failed
// (as the Warning event of its failure), or that all succeed again.
const (
	FailedToGetServeApplications    RayServiceConditionReason = "FailedToGetServeApplications"
	FailedToUpdateServeApplications RayServiceConditionReason = "FailedToUpdateServeApplications"
	FailedToUpdateTargetCapacity    RayServiceConditionReason = "FailedToUpdateTargetCapacity"
	FailedServeProxyHealthCheck     RayServiceConditionReason = "FailedServeProxyHealthCheck"
	ServeRequestsSucceeded          RayServiceConditionReason = "ServeRequestsSucceeded"
)

// RayService serves Ray Serve applications and upgrades their cluster
// without downtime.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="service status",type=string,JSONPath=".status.serviceStatus"
// +kubebuilder:printcolumn:name="num serve endpoints",type=string,JSONPath=".status.numServeEndpoints"
type RayService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired service.
	Spec RayServiceSpec `json:"spec,omitempty"`
	// Status is the observed service.
	// +optional
	Status RayServiceStatuses `json:"status,omitempty"`
}

// RayServiceList is a list of RayServices.
//
// +kubebuilder:object:root=true
type RayServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RayService `json:"items"`
}
