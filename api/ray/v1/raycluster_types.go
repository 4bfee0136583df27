package v1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RayClusterSpec is the desired shape of a Ray cluster: one head group, any
// number of worker groups, and cluster-wide options.
type RayClusterSpec struct {
	// UpgradeStrategy says what happens to running Pods when the Pod templates change.
	// +optional
	UpgradeStrategy *RayClusterUpgradeStrategy `json:"upgradeStrategy,omitempty"`
	// AuthOptions configures authentication between Ray components and clients.
	// +optional
	AuthOptions *AuthOptions `json:"authOptions,omitempty"`
	// Suspend, when true, removes every head and worker Pod while keeping the object.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// IdleTerminationOptions ends a standalone RayCluster that has been idle
	// (no pending or running Ray job in its dashboard) for
	// idleTimeoutSeconds: it is suspended or deleted, as policy says.
	// Clusters owned by a RayJob or a RayService are never ended. Not a
	// KubeRay field yet (KubeRay PR #5210 proposes it).
	// +optional
	IdleTerminationOptions *IdleTerminationOptions `json:"idleTerminationOptions,omitempty"`
	// ManagedBy names the controller responsible for this RayCluster. Absent or
	// 'ray.io/kuberay-operator' means this operator; 'kueue.x-k8s.io/multikueue'
	// hands the object to MultiKueue. It cannot change once set.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the managedBy field is immutable"
	// +kubebuilder:validation:XValidation:rule="self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue']",message="the managedBy field value must be either 'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`
	// AutoscalerOptions tunes the autoscaler sidecar of the head Pod.
	// +optional
	AutoscalerOptions *AutoscalerOptions `json:"autoscalerOptions,omitempty"`
	// HeadServiceAnnotations are copied onto the head Service.
	// +optional
	HeadServiceAnnotations map[string]string `json:"headServiceAnnotations,omitempty"`
	// EnableInTreeAutoscaling adds the Ray autoscaler sidecar to the head Pod.
	// +optional
	EnableInTreeAutoscaling *bool `json:"enableInTreeAutoscaling,omitempty"`
	// GcsFaultToleranceOptions turns on GCS fault tolerance and says where GCS state is kept.
	// +optional
	GcsFaultToleranceOptions *GcsFaultToleranceOptions `json:"gcsFaultToleranceOptions,omitempty"`
	// HistoryServerOptions configures the history-server log collector.
	// +optional
	HistoryServerOptions *HistoryServerOptions `json:"historyServerOptions,omitempty"`
	// NetworkPolicy, when set, isolates the cluster's Pods with NetworkPolicies
	// (one for the head, one per worker group). Traffic between the cluster's own
	// Pods is always allowed; DNS egress is not added automatically.
	// +optional
	NetworkPolicy *NetworkPolicyConfig `json:"networkPolicy,omitempty"`
	// TLSOptions turns on mutual TLS between Ray components, with certificates
	// issued through cert-manager.
	// +optional
	TLSOptions *TLSOptions `json:"tlsOptions,omitempty"`
	// HeadGroupSpec describes the head Pod.
	HeadGroupSpec HeadGroupSpec `json:"headGroupSpec"`
	// RayVersion is the Ray release the images run; it selects version-dependent
	// behaviour such as the autoscaler version and the job submission command.
	// +optional
	RayVersion string `json:"rayVersion,omitempty"`
	// WorkerGroupSpecs describes the groups of worker Pods.
	// +optional
	WorkerGroupSpecs []WorkerGroupSpec `json:"workerGroupSpecs,omitempty"`
}

// TLSOptions switches mutual TLS on for a RayCluster.
type TLSOptions struct {
	// Enabled turns mutual TLS on. Unset means off.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// RayClusterUpgradeType is how Pods are replaced after a template change.
// +kubebuilder:validation:Enum=Recreate;None;RollingUpdate
type RayClusterUpgradeType string

// Values of RayClusterUpgradeType.
const (
	// RayClusterRecreate deletes all Pods and creates them anew from the new templates.
	RayClusterRecreate RayClusterUpgradeType = "Recreate"
	// RayClusterUpgradeNone leaves running Pods alone after a template change.
	RayClusterUpgradeNone RayClusterUpgradeType = "None"
	// RayClusterRollingUpdate replaces the Pods of a worker group whose
	// template changed in batches bounded by rollingUpdate's maxSurge and
	// maxUnavailable, never below the group's minReplicas; the head Pod is
	// left alone. Not a KubeRay value (KubeRay issue #3905 asks for it).
	RayClusterRollingUpdate RayClusterUpgradeType = "RollingUpdate"
)

// RayClusterUpgradeStrategy holds the upgrade type of a RayCluster.
type RayClusterUpgradeStrategy struct {
	// Type is Recreate, None or RollingUpdate.
	// +optional
	Type *RayClusterUpgradeType `json:"type,omitempty"`
	// RollingUpdate tunes type RollingUpdate; it may be set only with that
	// type. Not a KubeRay field.
	// +optional
	RollingUpdate *RayClusterRollingUpdateOptions `json:"rollingUpdate,omitempty"`
}

// RayClusterRollingUpdateOptions bounds the batches of a rolling worker group
// update, as a Deployment's rollingUpdate does, per worker group: numbers
// or percentages of the group's desired replicas.
type RayClusterRollingUpdateOptions struct {
	// MaxUnavailable is how many of the group's desired replicas may be
	// unready during the update (a percentage rounds down). Default 25%.
	// The group's minReplicas is a floor whatever this says.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// MaxSurge is how many Pods the group may have beyond its desired
	// replicas during the update (a percentage rounds up). Default 25%.
	// maxUnavailable and maxSurge may not both be 0.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// AuthMode selects whether Ray requires an authentication token.
type AuthMode string

// Values of AuthMode.
const (
	// AuthModeDisabled runs Ray without authentication.
	AuthModeDisabled AuthMode = "disabled"
	// AuthModeToken requires a bearer token for Ray's APIs.
	AuthModeToken AuthMode = "token"
)

// AuthOptions is the authentication configuration of a RayCluster.
type AuthOptions struct {
	// EnableK8sTokenAuth lets Ray check tokens against the Kubernetes API server
	// instead of a shared secret. Meant for standalone RayClusters.
	// +optional
	EnableK8sTokenAuth *bool `json:"enableK8sTokenAuth,omitempty"`
	// SecretName names an existing Secret whose `auth_token` key holds the token;
	// when set, the operator does not generate a Secret of its own.
	// +optional
	SecretName *string `json:"secretName,omitempty"`
	// Mode is "disabled" or "token"; unset is treated as "token".
	// +kubebuilder:validation:Enum=disabled;token
	// +optional
	Mode AuthMode `json:"mode,omitempty"`
}

// GcsFaultToleranceBackend is where a fault-tolerant GCS persists its state.
// +kubebuilder:validation:Enum=redis;rocksdb
type GcsFaultToleranceBackend string

// Values of GcsFaultToleranceBackend.
const (
	// GcsFTBackendRedis keeps GCS state in an external Redis.
	GcsFTBackendRedis GcsFaultToleranceBackend = "redis"
	// GcsFTBackendRocksDB keeps GCS state in RocksDB on a volume of the head Pod.
	GcsFTBackendRocksDB GcsFaultToleranceBackend = "rocksdb"
)

// GcsFaultToleranceOptions configures GCS fault tolerance.
type GcsFaultToleranceOptions struct {
	// Backend picks the storage; unset means redis. It cannot be switched on an
	// existing cluster.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="gcsFaultToleranceOptions.backend is immutable"
	// +optional
	Backend GcsFaultToleranceBackend `json:"backend,omitempty"`
	// RedisUsername is the Redis user, inline or from a reference.
	// +optional
	RedisUsername *RedisCredential `json:"redisUsername,omitempty"`
	// RedisPassword is the Redis password, inline or from a reference.
	// +optional
	RedisPassword *RedisCredential `json:"redisPassword,omitempty"`
	// ExternalStorageNamespace isolates this cluster's keys in Redis; it defaults
	// to the RayCluster's UID.
	// +optional
	ExternalStorageNamespace string `json:"externalStorageNamespace,omitempty"`
	// RedisAddress is host:port of the Redis server (redis backend).
	// +optional
	RedisAddress string `json:"redisAddress,omitempty"`
	// Storage describes the volume that holds RocksDB (rocksdb backend).
	// +optional
	Storage *GcsEmbeddedStorage `json:"storage,omitempty"`
}

// GcsEmbeddedStorage describes the PersistentVolumeClaim behind the embedded
// RocksDB GCS store. RocksDB allows one writer at a time; when the volume can
// be attached to several Pods, keeping a single writer is the user's job.
type GcsEmbeddedStorage struct {
	// ClaimName uses an existing claim owned by the user; the operator neither
	// creates nor deletes it. Excludes Size, StorageClassName and AccessModes.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// Size of the claim the operator creates (1Gi when unset).
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// StorageClassName of the claim the operator creates; cluster default when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// AccessModes of the claim the operator creates ([ReadWriteOnce] when unset).
	// +optional
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	// SubPath mounts a directory inside the volume rather than its root.
	// +optional
	SubPath string `json:"subPath,omitempty"`
	// DeletionPolicy decides whether an operator-created claim goes away with the
	// RayCluster (DeleteWithCluster, the default) or outlives it (Retain).
	// +optional
	DeletionPolicy *GCSStorageDeletionPolicy `json:"deletionPolicy,omitempty"`
}

// GCSStorageDeletionPolicy is the fate of an operator-created GCS claim when
// its RayCluster is deleted.
// +kubebuilder:validation:Enum=DeleteWithCluster;Retain
type GCSStorageDeletionPolicy string

// Values of GCSStorageDeletionPolicy.
const (
	// DeleteWithClusterGCSStorageDeletionPolicy owns the claim by the RayCluster
	// so that garbage collection removes both together.
	DeleteWithClusterGCSStorageDeletionPolicy GCSStorageDeletionPolicy = "DeleteWithCluster"
	// RetainGCSStorageDeletionPolicy leaves the claim behind for a later cluster.
	RetainGCSStorageDeletionPolicy GCSStorageDeletionPolicy = "Retain"
)

// RedisCredential is a Redis user name or password, given inline or read from
// a Secret, ConfigMap or field reference like an environment variable.
type RedisCredential struct {
	// ValueFrom reads the value from another object.
	// +optional
	ValueFrom *corev1.EnvVarSource `json:"valueFrom,omitempty"`
	// Value is the literal value.
	// +optional
	Value string `json:"value,omitempty"`
}

// HistoryServerOptions configures the Ray history server integration.
type HistoryServerOptions struct {
	// CollectorOptions configures the log collector sidecar.
	// +optional
	CollectorOptions *CollectorOptions `json:"collectorOptions,omitempty"`
}

// CollectorOptions is the container configuration of the history-server
// collector sidecar.
type CollectorOptions struct {
	// Image of the collector container.
	// +optional
	Image *string `json:"image,omitempty"`
	// ImagePullPolicy of the collector container.
	// +optional
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// Resources of the collector container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// Env adds environment variables to the collector container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// NetworkPolicyMode is which directions of traffic the generated
// NetworkPolicies deny.
// +kubebuilder:validation:Enum=DenyAll;DenyAllIngress;DenyAllEgress
type NetworkPolicyMode string

// Values of NetworkPolicyMode.
const (
	// NetworkPolicyDenyAll denies ingress and egress.
	NetworkPolicyDenyAll NetworkPolicyMode = "DenyAll"
	// NetworkPolicyDenyAllIngress denies ingress only.
	NetworkPolicyDenyAllIngress NetworkPolicyMode = "DenyAllIngress"
	// NetworkPolicyDenyAllEgress denies egress only.
	NetworkPolicyDenyAllEgress NetworkPolicyMode = "DenyAllEgress"
)

// NetworkPolicyConfig configures the NetworkPolicies generated for a cluster.
type NetworkPolicyConfig struct {
	// Mode is the isolation level.
	// +kubebuilder:default=DenyAll
	// +optional
	Mode *NetworkPolicyMode `json:"mode,omitempty"`
	// Head adds rules to the head Pod's policy.
	// +optional
	Head *NetworkPolicyRules `json:"head,omitempty"`
	// Worker adds rules to every worker group's policy unless WorkerGroups has
	// an entry for that group.
	// +optional
	Worker *NetworkPolicyRules `json:"worker,omitempty"`
	// WorkerGroups replaces Worker for the named groups.
	// +listType=map
	// +listMapKey=groupName
	// +optional
	WorkerGroups []WorkerGroupNetworkPolicyRules `json:"workerGroups,omitempty"`
}

// WorkerGroupNetworkPolicyRules are the extra policy rules of one worker group.
type WorkerGroupNetworkPolicyRules struct {
	// GroupName is the worker group these rules apply to.
	// +kubebuilder:validation:Required
	GroupName string `json:"groupName"`

	NetworkPolicyRules `json:",inline"`
}

// NetworkPolicyRules are rules appended to a generated NetworkPolicy.
type NetworkPolicyRules struct {
	// IngressRules are extra allowed ingress peers (used when ingress is denied).
	// +optional
	IngressRules []networkingv1.NetworkPolicyIngressRule `json:"ingressRules,omitempty"`
	// EgressRules are extra allowed egress peers (used when egress is denied).
	// Allow DNS here when egress is denied, or workers cannot resolve the head.
	// +optional
	EgressRules []networkingv1.NetworkPolicyEgressRule `json:"egressRules,omitempty"`
}

// HeadGroupSpec describes the head Pod of a Ray cluster.
type HeadGroupSpec struct {
	// Template is the Pod template of the head.
	Template corev1.PodTemplateSpec `json:"template"`
	// HeadService overrides parts of the Service created for the head Pod.
	// +optional
	HeadService *corev1.Service `json:"headService,omitempty"`
	// EnableIngress asks for an Ingress (or Route) in front of the head Service.
	// +optional
	EnableIngress *bool `json:"enableIngress,omitempty"`
	// IngressOptions configures that Ingress.
	// +optional
	IngressOptions *IngressOptions `json:"ingressOptions,omitempty"`
	// Resources are Ray logical resources of the head; they take precedence over
	// the same settings in rayStartParams and do not touch container resources.
	// +optional
	Resources map[string]string `json:"resources,omitempty"`
	// Labels are Ray node labels of the head; they are also put on the Pod and
	// take precedence over --labels in rayStartParams.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// RayStartParams are extra `ray start` flags, without leading dashes.
	// +optional
	RayStartParams map[string]string `json:"rayStartParams"`
	// ServiceType is the type of the head Service.
	// +optional
	ServiceType corev1.ServiceType `json:"serviceType,omitempty"`
}

// IngressPathType is the path matching mode of the head Ingress.
// +kubebuilder:validation:Enum=Exact;Prefix;ImplementationSpecific
type IngressPathType string

// Values of IngressPathType, as in networking.k8s.io/v1.
const (
	IngressPathTypeExact                  IngressPathType = "Exact"
	IngressPathTypePrefix                 IngressPathType = "Prefix"
	IngressPathTypeImplementationSpecific IngressPathType = "ImplementationSpecific"
)

// IngressOptions configures the Ingress of the head group.
type IngressOptions struct {
	// Host to match; any host when unset.
	// +optional
	Host *string `json:"host,omitempty"`
	// Path routed to the dashboard; "/" when unset.
	// +optional
	Path *string `json:"path,omitempty"`
	// PathType of Path; Prefix when unset.
	// +optional
	PathType *IngressPathType `json:"pathType,omitempty"`
	// TLS termination settings of the Ingress.
	// +optional
	TLS []networkingv1.IngressTLS `json:"tls,omitempty"`
}

// WorkerGroupSpec describes one group of identical worker Pods.
type WorkerGroupSpec struct {
	// Suspend deletes every Pod of the group. It is set by the RayJob
	// controller's DeleteWorkers policy and is not meant for users.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// GroupName identifies the group within the cluster.
	GroupName string `json:"groupName"`
	// Replicas is the desired number of replicas. Optional so that the
	// autoscaler, not the manifest, can own it.
	// +kubebuilder:default:=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// MinReplicas is the lower bound for scaling.
	// +kubebuilder:default:=0
	MinReplicas *int32 `json:"minReplicas"`
	// MaxReplicas is the upper bound for scaling.
	// +kubebuilder:default:=2147483647
	MaxReplicas *int32 `json:"maxReplicas"`
	// IdleTimeoutSeconds overrides, for this group, how long autoscaler v2 keeps
	// an idle worker.
	// +optional
	IdleTimeoutSeconds *int32 `json:"idleTimeoutSeconds,omitempty"`
	// Priority orders groups for scale-up when several fit a demand (higher
	// first). A non-zero value needs autoscaler v2 and a rayVersion of 2.56.0
	// or later (Ray's autoscaler reads it from 2.59.0).
	// +kubebuilder:default:=0
	// +optional
	Priority *int32 `json:"priority,omitempty"`
	// Resources are Ray logical resources of each worker; see HeadGroupSpec.
	// +optional
	Resources map[string]string `json:"resources,omitempty"`
	// Labels are Ray node labels of each worker; see HeadGroupSpec.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// RayStartParams are extra `ray start` flags, without leading dashes.
	// +optional
	RayStartParams map[string]string `json:"rayStartParams"`
	// Template is the Pod template of the group's workers.
	Template corev1.PodTemplateSpec `json:"template"`
	// ScaleStrategy lists specific workers to remove.
	// +optional
	ScaleStrategy ScaleStrategy `json:"scaleStrategy,omitempty"`
	// NumOfHosts is the number of Pods per replica (multi-host slices, e.g. TPU).
	// +kubebuilder:default:=1
	// +optional
	NumOfHosts int32 `json:"numOfHosts,omitempty"`
}

// ScaleStrategy names workers the autoscaler wants removed.
type ScaleStrategy struct {
	// WorkersToDelete are names of worker Pods to delete.
	WorkersToDelete []string `json:"workersToDelete,omitempty"`
}

// AutoscalerOptions configures the autoscaler container of the head Pod.
type AutoscalerOptions struct {
	// Resources of the autoscaler container (500m CPU, 512Mi memory by default).
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// Image overrides the autoscaler image, for development.
	// +optional
	Image *string `json:"image,omitempty"`
	// ImagePullPolicy overrides the autoscaler image pull policy.
	// +optional
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// SecurityContext of the autoscaler container.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// IdleTimeoutSeconds is how long a worker without Ray load is kept (60 by
	// default); read by the autoscaler, not by the operator.
	// +optional
	IdleTimeoutSeconds *int32 `json:"idleTimeoutSeconds,omitempty"`
	// UpscalingMode: Conservative caps pending workers at the cluster size;
	// Default and Aggressive do not rate-limit.
	// +optional
	UpscalingMode *UpscalingMode `json:"upscalingMode,omitempty"`
	// Version forces autoscaler v1 or v2: the operator sets
	// RAY_enable_autoscaler_v2 ("false" or "true") on the head's Ray container,
	// and for v2 restartPolicy Never on every Pod. Unset, the operator injects
	// neither, so Ray uses the autoscaler its version defaults to (v2 from
	// Ray 2.48.0); validation counts only an explicit v2 (or the head's
	// RAY_enable_autoscaler_v2) as v2, e.g. for a group's idleTimeoutSeconds.
	// +optional
	Version *AutoscalerVersion `json:"version,omitempty"`
	// Env adds environment variables to the autoscaler container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// EnvFrom adds environment sources to the autoscaler container.
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// VolumeMounts of the autoscaler container (e.g. for TLS material).
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// Command replaces the autoscaler container's command.
	// +optional
	Command []string `json:"command,omitempty"`
	// Args replaces the autoscaler container's arguments.
	// +optional
	Args []string `json:"args,omitempty"`
}

// UpscalingMode is the autoscaler's scale-up pace.
// +kubebuilder:validation:Enum=Default;Aggressive;Conservative
type UpscalingMode string

// Values of UpscalingMode.
const (
	UpscalingModeDefault      UpscalingMode = "Default"
	UpscalingModeAggressive   UpscalingMode = "Aggressive"
	UpscalingModeConservative UpscalingMode = "Conservative"
)

// AutoscalerVersion is the generation of the Ray autoscaler.
// +kubebuilder:validation:Enum=v1;v2
type AutoscalerVersion string

// Values of AutoscalerVersion.
const (
	AutoscalerVersionV1 AutoscalerVersion = "v1"
	AutoscalerVersionV2 AutoscalerVersion = "v2"
)

// ClusterState is the coarse state of a RayCluster, kept for compatibility;
// conditions carry the detail.
type ClusterState string

// Values of ClusterState.
const (
	// Ready means every Pod of the cluster has been running and ready.
	Ready ClusterState = "ready"
	// Failed is no longer set; it stays so that code naming it still compiles.
	Failed ClusterState = "failed"
	// Suspended means the cluster is suspended and has no Pods.
	Suspended ClusterState = "suspended"
)

// RayClusterStatus is what the operator observed about a RayCluster.
type RayClusterStatus struct {
	// State is the coarse state, kept for compatibility; Conditions supersede it.
	// +optional
	State ClusterState `json:"state,omitempty"`
	// DesiredCPU is the sum of CPU requested by all desired Pods.
	// +optional
	DesiredCPU resource.Quantity `json:"desiredCPU,omitempty"`
	// DesiredMemory is the sum of memory requested by all desired Pods.
	// +optional
	DesiredMemory resource.Quantity `json:"desiredMemory,omitempty"`
	// DesiredGPU is the sum of GPUs requested by all desired Pods.
	// +optional
	DesiredGPU resource.Quantity `json:"desiredGPU,omitempty"`
	// DesiredTPU is the sum of TPUs requested by all desired Pods.
	// +optional
	DesiredTPU resource.Quantity `json:"desiredTPU,omitempty"`
	// LastUpdateTime is when the status was last written.
	// +nullable
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// StateTransitionTimes records when each state was last entered.
	// +optional
	StateTransitionTimes map[ClusterState]*metav1.Time `json:"stateTransitionTimes,omitempty"`
	// Endpoints maps head Service port names to port numbers.
	// +optional
	Endpoints map[string]string `json:"endpoints,omitempty"`
	// Head locates the head Pod and Service.
	// +optional
	Head HeadInfo `json:"head,omitempty"`
	// Reason explains State.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Conditions are the detailed observations (see RayClusterConditionType).
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// ReadyWorkerReplicas counts ready worker Pods (Pods, despite the name).
	// +optional
	ReadyWorkerReplicas int32 `json:"readyWorkerReplicas,omitempty"`
	// AvailableWorkerReplicas counts running worker Pods.
	// +optional
	AvailableWorkerReplicas int32 `json:"availableWorkerReplicas,omitempty"`
	// DesiredWorkerReplicas is the sum over groups of replicas*numOfHosts.
	// +optional
	DesiredWorkerReplicas int32 `json:"desiredWorkerReplicas,omitempty"`
	// MinWorkerReplicas is the sum over groups of minReplicas*numOfHosts.
	// +optional
	MinWorkerReplicas int32 `json:"minWorkerReplicas,omitempty"`
	// MaxWorkerReplicas is the sum over groups of maxReplicas*numOfHosts.
	// +optional
	MaxWorkerReplicas int32 `json:"maxWorkerReplicas,omitempty"`
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// RayClusterConditionType names a condition of RayClusterStatus.
type RayClusterConditionType string

// Reasons used on RayCluster conditions.
const (
	AllPodRunningAndReadyFirstTime = "AllPodRunningAndReadyFirstTime"
	RayClusterPodsProvisioning     = "RayClusterPodsProvisioning"
	HeadPodNotFound                = "HeadPodNotFound"
	HeadPodRunningAndReady         = "HeadPodRunningAndReady"
	// UnknownReason is used when the cause cannot be determined.
	UnknownReason = "Unknown"
	// InvalidRayClusterMetadata is the RayClusterValidationFailed reason
	// (and the event reason) for invalid metadata, such as a too-long name.
	InvalidRayClusterMetadata = "InvalidRayClusterMetadata"
	// InvalidRayClusterSpec is the RayClusterValidationFailed reason (and the
	// event reason) for an invalid spec.
	InvalidRayClusterSpec = "InvalidRayClusterSpec"
)

// Condition types of a RayCluster.
const (
	// RayClusterProvisioned turns true the first time every Pod is ready, and
	// then never changes.
	RayClusterProvisioned RayClusterConditionType = "RayClusterProvisioned"
	// HeadPodReady follows the readiness of the head Pod.
	HeadPodReady RayClusterConditionType = "HeadPodReady"
	// RayClusterReplicaFailure is true when creating or deleting a Pod failed.
	RayClusterReplicaFailure RayClusterConditionType = "ReplicaFailure"
	// RayClusterSuspending is true while a suspend is deleting Pods.
	RayClusterSuspending RayClusterConditionType = "RayClusterSuspending"
	// RayClusterSuspended is true once a suspend has deleted every Pod. It is
	// never true together with RayClusterSuspending.
	RayClusterSuspended RayClusterConditionType = "RayClusterSuspended"
	// RayClusterIdle is set only on clusters with idleTerminationOptions:
	// true while the dashboard shows no pending or running job, its
	// lastTransitionTime being when the idleness began; false while a job
	// is active; unknown while the dashboard cannot tell.
	RayClusterIdle RayClusterConditionType = "RayClusterIdle"
	// RayClusterValidationFailed is true while the RayCluster cannot be
	// reconciled because its metadata or spec is invalid; its reason is
	// InvalidRayClusterMetadata or InvalidRayClusterSpec and its message says
	// what to fix, so `kubectl wait --for=condition=ValidationFailed` can wait
	// for it. KubeRay only records an event; the condition makes the error
	// visible in the object. It is removed once the object is valid again.
	RayClusterValidationFailed RayClusterConditionType = "ValidationFailed"
)

// HeadInfo locates the head Pod and its Service.
type HeadInfo struct {
	// +optional
	PodIP string `json:"podIP,omitempty"`
	// +optional
	ServiceIP string `json:"serviceIP,omitempty"`
	// +optional
	PodName string `json:"podName,omitempty"`
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
}

// RayNodeType is the role of a Pod the operator creates for a cluster.
type RayNodeType string

// Values of RayNodeType.
const (
	HeadNode   RayNodeType = "head"
	WorkerNode RayNodeType = "worker"
	// RedisCleanupNode is the Pod of the Job that wipes a deleted cluster's
	// GCS data from Redis.
	RedisCleanupNode RayNodeType = "redis-cleanup"
)

// RayCluster is a Ray cluster: a head Pod and groups of worker Pods.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="desired workers",type=integer,JSONPath=".status.desiredWorkerReplicas",priority=0
// +kubebuilder:printcolumn:name="available workers",type=integer,JSONPath=".status.availableWorkerReplicas",priority=0
// +kubebuilder:printcolumn:name="cpus",type=string,JSONPath=".status.desiredCPU",priority=0
// +kubebuilder:printcolumn:name="memory",type=string,JSONPath=".status.desiredMemory",priority=0
// +kubebuilder:printcolumn:name="gpus",type=string,JSONPath=".status.desiredGPU",priority=0
// +kubebuilder:printcolumn:name="tpus",type=string,JSONPath=".status.desiredTPU",priority=1
// +kubebuilder:printcolumn:name="status",type="string",JSONPath=".status.state",priority=0
// +kubebuilder:printcolumn:name="age",type="date",JSONPath=".metadata.creationTimestamp",priority=0
// +kubebuilder:printcolumn:name="head pod IP",type="string",JSONPath=".status.head.podIP",priority=1
// +kubebuilder:printcolumn:name="head service IP",type="string",JSONPath=".status.head.serviceIP",priority=1
type RayCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired cluster.
	Spec RayClusterSpec `json:"spec,omitempty"`
	// Status is the observed cluster.
	// +optional
	Status RayClusterStatus `json:"status,omitempty"`
}

// RayClusterList is a list of RayClusters.
//
// +kubebuilder:object:root=true
type RayClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RayCluster `json:"items"`
}

// EventReason is the reason of an event the operator records.
type EventReason string

// Event reasons shared by the controllers.
const (
	RayConfigError         EventReason = "RayConfigError"
	PodReconciliationError EventReason = "PodReconciliationError"
)

// IdleTerminationPolicy is what happens to a RayCluster idle past its
// threshold.
// +kubebuilder:validation:Enum=Suspend;Delete
type IdleTerminationPolicy string

const (
	// IdleTerminationSuspend sets spec.suspend: the Pods go, the object stays.
	IdleTerminationSuspend IdleTerminationPolicy = "Suspend"
	// IdleTerminationDelete deletes the RayCluster.
	IdleTerminationDelete IdleTerminationPolicy = "Delete"
)

// IdleTerminationOptions says when an idle RayCluster ends and how.
type IdleTerminationOptions struct {
	// Policy is Suspend or Delete.
	Policy IdleTerminationPolicy `json:"policy"`
	// TimeoutSeconds is how long the cluster must stay idle before it ends
	// (the name KubeRay PR #5210 and ray-project/ray #65763 use).
	// +kubebuilder:validation:Minimum=1
	TimeoutSeconds int32 `json:"timeoutSeconds"`
}
