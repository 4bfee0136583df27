package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// JobStatus is the status of a Ray job as Ray's job API reports it.
type JobStatus string

// Values of JobStatus. Keep AllJobStatuses in step with this list.
const (
	// JobStatusNew is the empty status before Ray has reported anything.
	JobStatusNew       JobStatus = ""
	JobStatusPending   JobStatus = "PENDING"
	JobStatusRunning   JobStatus = "RUNNING"
	JobStatusStopped   JobStatus = "STOPPED"
	JobStatusSucceeded JobStatus = "SUCCEEDED"
	JobStatusFailed    JobStatus = "FAILED"
)

// AllJobStatuses lists every JobStatus, including the empty JobStatusNew.
var AllJobStatuses = []JobStatus{
	JobStatusNew,
	JobStatusPending,
	JobStatusRunning,
	JobStatusStopped,
	JobStatusSucceeded,
	JobStatusFailed,
}

// IsJobTerminal reports whether a Ray job in this status can no longer change:
// STOPPED, SUCCEEDED or FAILED, the same set Ray itself treats as final.
func IsJobTerminal(status JobStatus) bool {
	switch status {
	case JobStatusStopped, JobStatusSucceeded, JobStatusFailed:
		return true
	default:
		return false
	}
}

// JobDeploymentStatus is the operator's lifecycle state of a RayJob: the
// cluster, the submission and the cleanup, as opposed to the Ray job itself.
type JobDeploymentStatus string

// Values of JobDeploymentStatus.
const (
	JobDeploymentStatusNew              JobDeploymentStatus = ""
	JobDeploymentStatusInitializing     JobDeploymentStatus = "Initializing"
	JobDeploymentStatusRunning          JobDeploymentStatus = "Running"
	JobDeploymentStatusComplete         JobDeploymentStatus = "Complete"
	JobDeploymentStatusFailed           JobDeploymentStatus = "Failed"
	JobDeploymentStatusValidationFailed JobDeploymentStatus = "ValidationFailed"
	JobDeploymentStatusSuspending       JobDeploymentStatus = "Suspending"
	JobDeploymentStatusSuspended        JobDeploymentStatus = "Suspended"
	JobDeploymentStatusRetrying         JobDeploymentStatus = "Retrying"
	JobDeploymentStatusWaiting          JobDeploymentStatus = "Waiting"
)

// IsJobDeploymentTerminal reports whether a RayJob in this deployment status
// is finished for good: Complete or Failed. ValidationFailed is final as
// well (the operator does not move it on, even after the spec is corrected:
// delete and recreate the RayJob), but it is not included because it ends
// no attempt: no retry, no EndTime, no deletion policy apply to it.
func IsJobDeploymentTerminal(status JobDeploymentStatus) bool {
	switch status {
	case JobDeploymentStatusComplete, JobDeploymentStatusFailed:
		return true
	default:
		return false
	}
}

// JobFailedReason says why a RayJob reached Failed (or ValidationFailed).
type JobFailedReason string

// Values of JobFailedReason.
const (
	// SubmissionFailed: the submitter could not submit the job or failed itself.
	SubmissionFailed JobFailedReason = "SubmissionFailed"
	// DeadlineExceeded: activeDeadlineSeconds passed. Never retried.
	DeadlineExceeded JobFailedReason = "DeadlineExceeded"
	// AppFailed: the Ray job itself failed.
	AppFailed JobFailedReason = "AppFailed"
	// JobDeploymentStatusTransitionGracePeriodExceeded: the Ray job finished but
	// the submitter never did within the grace period.
	JobDeploymentStatusTransitionGracePeriodExceeded JobFailedReason = "JobDeploymentStatusTransitionGracePeriodExceeded"
	// ValidationFailed: the spec was rejected by the operator's validation.
	ValidationFailed JobFailedReason = "ValidationFailed"
	// PreRunningDeadlineExceeded: preRunningDeadlineSeconds passed before the
	// RayJob reached Running.
	PreRunningDeadlineExceeded JobFailedReason = "PreRunningDeadlineExceeded"
	// JobStatusCheckTimeoutExceeded: the dashboard could not be asked about
	// the Ray job for longer than RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS. Never
	// retried.
	JobStatusCheckTimeoutExceeded JobFailedReason = "JobStatusCheckTimeoutExceeded"
)

// RayJobRetryStrategy is how the next attempt of a RayJob starts after a
// failed one (spec.backoffLimit) or a suspension.
// +kubebuilder:validation:Enum=Recreate;BlockingRecreate
type RayJobRetryStrategy string

// Values of RayJobRetryStrategy.
const (
	// RetryRecreate is KubeRay's behaviour: the next attempt starts once
	// the previous attempt's RayCluster and submitter Job are deleted.
	RetryRecreate RayJobRetryStrategy = "Recreate"
	// RetryBlockingRecreate also waits until every Pod of the previous
	// attempt is gone, and numbers the attempts.
	RetryBlockingRecreate RayJobRetryStrategy = "BlockingRecreate"
)

// JobSubmissionMode is how the operator gets the entrypoint to the cluster.
type JobSubmissionMode string

// Values of JobSubmissionMode.
const (
	// K8sJobMode runs `ray job submit` in a Kubernetes Job (the default).
	K8sJobMode JobSubmissionMode = "K8sJobMode"
	// HTTPMode submits through the dashboard's HTTP API from the operator.
	HTTPMode JobSubmissionMode = "HTTPMode"
	// InteractiveMode submits nothing; the user submits and sets spec.jobId.
	InteractiveMode JobSubmissionMode = "InteractiveMode"
	// SidecarMode runs the submitter as an extra container of the head Pod.
	SidecarMode JobSubmissionMode = "SidecarMode"
)

// DeletionStrategy says what to clean up once a RayJob has finished. It is
// written either in the legacy style (both onSuccess and onFailure) or in the
// rules style (a non-empty deletionRules); the two cannot be mixed. Rules are
// incompatible with shutdownAfterJobFinishes and the global
// ttlSecondsAfterFinished, which the operator checks. Using this block needs
// the RayJobDeletionPolicy feature gate.
//
// +kubebuilder:validation:XValidation:rule="!((has(self.onSuccess) || has(self.onFailure)) && has(self.deletionRules))",message="legacy policies (onSuccess/onFailure) and deletionRules cannot be used together within the same deletionStrategy"
// +kubebuilder:validation:XValidation:rule="((has(self.onSuccess) && has(self.onFailure)) || has(self.deletionRules))",message="deletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field (cannot be empty)"
type DeletionStrategy struct {
	// OnSuccess applies when the job succeeded (legacy style; prefer DeletionRules).
	// +optional
	OnSuccess *DeletionPolicy `json:"onSuccess,omitempty"`
	// OnFailure applies when the job failed (legacy style; prefer DeletionRules).
	// +optional
	OnFailure *DeletionPolicy `json:"onFailure,omitempty"`
	// DeletionRules are actions with their own trigger and delay. When several
	// are overdue at once, the most destructive one runs first.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +optional
	DeletionRules []DeletionRule `json:"deletionRules,omitempty"`
}

// DeletionRule is one cleanup action and when to take it.
type DeletionRule struct {
	// Policy is the action.
	// +kubebuilder:validation:Enum=DeleteCluster;DeleteWorkers;DeleteSelf;DeleteNone
	Policy DeletionPolicyType `json:"policy"`
	// Condition triggers the action.
	Condition DeletionCondition `json:"condition"`
}

// DeletionCondition matches exactly one of the Ray job's status (jobStatus)
// or the RayJob's deployment status (jobDeploymentStatus), after a delay.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.jobStatus) && has(self.jobDeploymentStatus))",message="JobStatus and JobDeploymentStatus cannot be used together within the same deletion condition."
// +kubebuilder:validation:XValidation:rule="has(self.jobStatus) || has(self.jobDeploymentStatus)",message="the deletion condition requires either the JobStatus or the JobDeploymentStatus field."
type DeletionCondition struct {
	// JobStatus is the final Ray job status to match.
	// +kubebuilder:validation:Enum=SUCCEEDED;FAILED
	// +optional
	JobStatus *JobStatus `json:"jobStatus,omitempty"`
	// JobDeploymentStatus is the final deployment status to match.
	// +kubebuilder:validation:Enum=Failed
	// +optional
	JobDeploymentStatus *JobDeploymentStatus `json:"jobDeploymentStatus,omitempty"`
	// TTLSeconds is how long after the match the action runs.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSeconds int32 `json:"ttlSeconds,omitempty"`
}

// DeletionPolicy is the single action of the legacy onSuccess/onFailure
// style; DeletionRule supersedes it.
type DeletionPolicy struct {
	// Policy is the action. Required in practice for onSuccess/onFailure, but
	// optional in the schema.
	// +kubebuilder:validation:Enum=DeleteCluster;DeleteWorkers;DeleteSelf;DeleteNone
	// +optional
	Policy *DeletionPolicyType `json:"policy,omitempty"`
}

// DeletionPolicyType is a cleanup action.
type DeletionPolicyType string

// Values of DeletionPolicyType.
const (
	// DeleteCluster deletes the RayCluster.
	DeleteCluster DeletionPolicyType = "DeleteCluster"
	// DeleteWorkers deletes the worker Pods and keeps the head.
	DeleteWorkers DeletionPolicyType = "DeleteWorkers"
	// DeleteSelf deletes the RayJob, and with it everything it owns.
	DeleteSelf DeletionPolicyType = "DeleteSelf"
	// DeleteNone deletes nothing.
	DeleteNone DeletionPolicyType = "DeleteNone"
)

// SubmitterConfig configures the submitter.
type SubmitterConfig struct {
	// BackoffLimit is the submitter Job's backoffLimit in K8sJobMode, or the
	// number of submitter container restarts allowed in SidecarMode.
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
}

// RayJobStatusInfo is the part of the dashboard's job information kept in
// the RayJob status.
type RayJobStatusInfo struct {
	StartTime *metav1.Time `json:"startTime,omitempty"`
	EndTime   *metav1.Time `json:"endTime,omitempty"`
}

// RayJobSpec is the desired state of a RayJob.
type RayJobSpec struct {
	// ActiveDeadlineSeconds bounds, in seconds, how long the RayJob may run
	// before the operator fails it.
	// +optional
	ActiveDeadlineSeconds *int32 `json:"activeDeadlineSeconds,omitempty"`
	// BackoffLimit is how many times a failed job is retried, each time on a new
	// RayCluster.
	// +kubebuilder:default:=0
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// RetryStrategy is how a retry (BackoffLimit) or a resumption starts the
	// next attempt. Recreate (the default, KubeRay's behaviour) starts it
	// once the previous RayCluster and submitter Job are deleted, while
	// their Pods may still be terminating. BlockingRecreate starts it only
	// once every Pod of the previous attempt is gone, and numbers the
	// attempts in status.executionAttempt and in the label
	// ray.io/rayjob-execution-attempt on the RayCluster, its Pods, the
	// submitter Job and its Pod. Not a KubeRay field (KubeRay issue #5211
	// proposes it, after JobSet's BlockingRecreate).
	// +optional
	RetryStrategy *RayJobRetryStrategy `json:"retryStrategy,omitempty"`
	// RayClusterSpec is the cluster created for the job. Excludes ClusterSelector.
	// +optional
	RayClusterSpec *RayClusterSpec `json:"rayClusterSpec,omitempty"`
	// SubmitterPodTemplate overrides the Pod that runs `ray job submit`.
	// +optional
	SubmitterPodTemplate *corev1.PodTemplateSpec `json:"submitterPodTemplate,omitempty"`
	// Metadata is passed to Ray with the job.
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
	// ClusterSelector picks an existing RayCluster by labels instead of creating one.
	// +optional
	ClusterSelector map[string]string `json:"clusterSelector,omitempty"`
	// SubmitterConfig configures the submitter.
	// +optional
	SubmitterConfig *SubmitterConfig `json:"submitterConfig,omitempty"`
	// ManagedBy names the controller responsible for this RayJob; see
	// RayClusterSpec.ManagedBy. It cannot change once set.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the managedBy field is immutable"
	// +kubebuilder:validation:XValidation:rule="self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue']",message="the managedBy field value must be either 'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`
	// DeletionStrategy says what to clean up after the job finishes; when unset,
	// shutdownAfterJobFinishes decides.
	// +optional
	DeletionStrategy *DeletionStrategy `json:"deletionStrategy,omitempty"`
	// Entrypoint is the command Ray runs for the job.
	// +optional
	Entrypoint string `json:"entrypoint,omitempty"`
	// RuntimeEnvYAML is the job's Ray runtime environment, as YAML text.
	// +optional
	RuntimeEnvYAML string `json:"runtimeEnvYAML,omitempty"`
	// JobID is the Ray submission ID to use; generated when empty.
	// +optional
	JobID string `json:"jobId,omitempty"`
	// SubmissionMode is how the job is submitted.
	// +kubebuilder:default:=K8sJobMode
	// +optional
	SubmissionMode JobSubmissionMode `json:"submissionMode,omitempty"`
	// EntrypointResources is a JSON map of custom Ray resources reserved for the
	// entrypoint.
	// +optional
	EntrypointResources string `json:"entrypointResources,omitempty"`
	// EntrypointNumCpus is the number of CPUs reserved for the entrypoint.
	// +optional
	EntrypointNumCpus float32 `json:"entrypointNumCpus,omitempty"`
	// EntrypointNumGpus is the number of GPUs reserved for the entrypoint.
	// +optional
	EntrypointNumGpus float32 `json:"entrypointNumGpus,omitempty"`
	// TTLSecondsAfterFinished delays the cluster shutdown requested by
	// shutdownAfterJobFinishes.
	// +kubebuilder:default:=0
	// +optional
	TTLSecondsAfterFinished int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// PreRunningDeadlineSeconds fails the RayJob when it has not reached Running
	// this many seconds after it started initializing.
	// +kubebuilder:validation:Minimum=1
	// +optional
	PreRunningDeadlineSeconds *int32 `json:"preRunningDeadlineSeconds,omitempty"`
	// ShutdownAfterJobFinishes deletes the RayCluster once the job has finished.
	// +optional
	ShutdownAfterJobFinishes bool `json:"shutdownAfterJobFinishes,omitempty"`
	// Suspend keeps the RayJob without a RayCluster: none is created while it is
	// true, and an existing one is deleted when it becomes true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// RayJobStatus is what the operator observed about a RayJob.
type RayJobStatus struct {
	// RayJobStatusInfo holds timestamps reported by the dashboard.
	// +optional
	RayJobStatusInfo RayJobStatusInfo `json:"rayJobInfo,omitempty"`
	// JobID is the Ray submission ID in use.
	// +optional
	JobID string `json:"jobId,omitempty"`
	// RayClusterName is the cluster the job runs on.
	// +optional
	RayClusterName string `json:"rayClusterName,omitempty"`
	// DashboardURL is host:port of the cluster's dashboard.
	// +optional
	DashboardURL string `json:"dashboardURL,omitempty"`
	// JobStatus is the Ray job status.
	// +optional
	JobStatus JobStatus `json:"jobStatus,omitempty"`
	// JobDeploymentStatus is the RayJob lifecycle state.
	// +optional
	JobDeploymentStatus JobDeploymentStatus `json:"jobDeploymentStatus,omitempty"`
	// Reason explains a failure.
	// +optional
	Reason JobFailedReason `json:"reason,omitempty"`
	// Message gives details.
	// +optional
	Message string `json:"message,omitempty"`
	// StartTime is when the deployment status left New for Initializing.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// EndTime is when the deployment status reached Complete or Failed.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// Succeeded counts successful attempts.
	// +kubebuilder:default:=0
	// +optional
	Succeeded *int32 `json:"succeeded,omitempty"`
	// Failed counts failed attempts.
	// +kubebuilder:default:=0
	// +optional
	Failed *int32 `json:"failed,omitempty"`
	// ExecutionAttempt numbers the RayJob's attempts from 1: every start of
	// a new attempt (a retry or a resumption) adds one. Set only with
	// spec.retryStrategy BlockingRecreate. Not a KubeRay field.
	// +optional
	ExecutionAttempt *int32 `json:"executionAttempt,omitempty"`
	// RayClusterStatus mirrors the status of the job's cluster.
	// +optional
	RayClusterStatus RayClusterStatus `json:"rayClusterStatus,omitempty"`
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// JobStatusCheckFailureStartTime is when asking the dashboard about the
	// Ray job started failing; a successful request clears it. A Running
	// RayJob fails with JobStatusCheckTimeoutExceeded once
	// RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS have passed since.
	// +optional
	JobStatusCheckFailureStartTime *metav1.Time `json:"jobStatusCheckFailureStartTime,omitempty"`
}

// RayJob runs one Ray job, on a cluster it creates or on an existing one.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="job status",type=string,JSONPath=".status.jobStatus",priority=0
// +kubebuilder:printcolumn:name="deployment status",type=string,JSONPath=".status.jobDeploymentStatus",priority=0
// +kubebuilder:printcolumn:name="ray cluster name",type="string",JSONPath=".status.rayClusterName",priority=0
// +kubebuilder:printcolumn:name="start time",type=string,JSONPath=".status.startTime",priority=0
// +kubebuilder:printcolumn:name="end time",type=string,JSONPath=".status.endTime",priority=0
// +kubebuilder:printcolumn:name="age",type="date",JSONPath=".metadata.creationTimestamp",priority=0
type RayJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired job.
	Spec RayJobSpec `json:"spec,omitempty"`
	// Status is the observed job.
	// +optional
	Status RayJobStatus `json:"status,omitempty"`
}

// RayJobList is a list of RayJobs.
//
// +kubebuilder:object:root=true
type RayJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RayJob `json:"items"`
}
