package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RayCronJobSpec is the desired state of a RayCronJob.
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
}

// RayCronJobStatus is what the operator observed about a RayCronJob.
type RayCronJobStatus struct {
	// LastScheduleTime is when a RayJob was last created by the schedule.
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
}

// RayCronJob creates RayJobs on a cron schedule.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="schedule",type=string,JSONPath=".spec.schedule",priority=0
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
