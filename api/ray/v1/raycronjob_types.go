package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Label and annotation of the RayJobs a RayCronJob creates (KubeRay's).
const (
	// LabelCronJobName names the RayCronJob that created a RayJob.
	LabelCronJobName = "ray.io/cronjob-name"
	// AnnotationCronJobScheduledTimestamp is the schedule time a RayJob was
	// created for, in RFC 3339 and UTC.
	AnnotationCronJobScheduledTimestamp = "ray.io/cronjob-scheduled-timestamp"
)

// ConcurrencyPolicy says what a RayCronJob does when a run is due while
// RayJobs it created earlier have not finished (batch/v1 CronJob's field).
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

// Values of ConcurrencyPolicy.
const (
	// AllowConcurrent starts the new RayJob next to the running ones (the
	// default, and KubeRay's only behaviour).
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips the run while a RayJob is running.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the running RayJobs and starts the new one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// RayCronJobSpec is the desired state of a RayCronJob. jobTemplate,
// schedule, timeZone and suspend are KubeRay's fields; the others are
// batch/v1 CronJob's, optional, and keep KubeRay's behaviour when unset.
// KubeRay's fields keep KubeRay's schema, so that every manifest it stores
// is stored here too; the operator checks the schedule and time zone.
type RayCronJobSpec struct {
	// JobTemplate is the spec of each RayJob the schedule creates.
	JobTemplate RayJobSpec `json:"jobTemplate"`
	// Schedule is a cron expression (five fields, or a descriptor like @hourly).
	Schedule string `json:"schedule"`
	// TimeZone is an IANA time zone name for Schedule; the operator's local
	// zone when unset. The empty string is rejected.
	// +kubebuilder:validation:MinLength=1
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`
	// Suspend stops new runs from being created; RayJobs already created are
	// left alone.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// ConcurrencyPolicy says what to do when a run is due while a RayJob
	// this RayCronJob created has not finished: Allow (default) starts it
	// anyway, Forbid skips it, Replace deletes the running RayJobs first.
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// StartingDeadlineSeconds skips a run that could not start within this
	// many seconds of its schedule time (an operator down, a suspension).
	// Unset: every missed run is caught up, unless more than 100 were
	// missed, when only the latest runs.
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="startingDeadlineSeconds must be a non-negative number of seconds"
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// SuccessfulJobsHistoryLimit is how many successful (Complete) RayJobs
	// to keep; older ones are deleted. Unset keeps them all (3 is a good value).
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="successfulJobsHistoryLimit must be a non-negative number of RayJobs"
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`
	// FailedJobsHistoryLimit is how many failed RayJobs to keep; older ones
	// are deleted. Unset keeps them all (1 is a good value).
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="failedJobsHistoryLimit must be a non-negative number of RayJobs"
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// RayCronJobConditionType is a type of RayCronJob condition.
type RayCronJobConditionType string

// RayCronJob condition types.
const (
	// RayCronJobSpecValid is True when the spec passed the operator's
	// validation (schedule, time zone, name, jobTemplate) and False, with
	// reason InvalidRayCronJobSpec and the error as message, when it did not.
	RayCronJobSpecValid RayCronJobConditionType = "SpecValid"
)

// RayCronJobStatus is what the operator observed about a RayCronJob.
type RayCronJobStatus struct {
	// LastScheduleTime is the latest schedule time the operator has dealt
	// with: it created a RayJob for it, or skipped it and said why in an
	// event (concurrencyPolicy Forbid, startingDeadlineSeconds, too many
	// missed runs).
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// LastSuccessfulTime is when the latest successful RayJob finished.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// Active references the RayJobs this RayCronJob created that have not
	// finished.
	// +listType=atomic
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`
	// Conditions: SpecValid.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RayCronJob creates RayJobs on a cron schedule.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="schedule",type=string,JSONPath=".spec.schedule",priority=0
// +kubebuilder:printcolumn:name="timezone",type=string,JSONPath=".spec.timeZone",priority=0
// +kubebuilder:printcolumn:name="last schedule",type=string,JSONPath=".status.lastScheduleTime",priority=0
// +kubebuilder:printcolumn:name="age",type="date",JSONPath=".metadata.creationTimestamp",priority=0
// +kubebuilder:printcolumn:name="suspend",type=boolean,JSONPath=".spec.suspend",priority=0
type RayCronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired schedule.
	Spec RayCronJobSpec `json:"spec,omitempty"`
	// Status is the observed schedule.
	Status RayCronJobStatus `json:"status,omitempty"`
}

// RayCronJobList is a list of RayCronJobs.
//
// +kubebuilder:object:root=true
type RayCronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RayCronJob `json:"items"`
}
