package schedulingv1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Limits and names of the API.
const (
	// WorkloadMaxPodGroupTemplates is how many PodGroupTemplates a Workload
	// may hold.
	WorkloadMaxPodGroupTemplates = 8
	// PodGroupScheduled is the PodGroup condition the scheduler sets: True
	// once the group is placed, False (reason Unschedulable) while it cannot
	// be.
	PodGroupScheduled = "PodGroupScheduled"
	// PodGroupReasonUnschedulable is the reason of a False PodGroupScheduled.
	PodGroupReasonUnschedulable = "Unschedulable"
	// PodGroupProtectionFinalizer is the finalizer the API server puts on a
	// PodGroup and kube-controller-manager removes once no Pod references it.
	PodGroupProtectionFinalizer = "scheduling.k8s.io/podgroup-protection"
)

// Workload describes the scheduling needs of a workload as PodGroup
// templates. Its spec is immutable.
//
// +kubebuilder:object:root=true
type Workload struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the object's metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the Workload's immutable specification.
	Spec WorkloadSpec `json:"spec"`
}

// WorkloadList is a list of Workloads.
//
// +kubebuilder:object:root=true
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the list's metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Workloads.
	Items []Workload `json:"items"`
}

// WorkloadSpec is what a Workload asks of the scheduler.
type WorkloadSpec struct {
	// ControllerRef names the object that manages the Workload, for tools.
	ControllerRef *TypedLocalObjectReference `json:"controllerRef,omitempty"`
	// PodGroupTemplates are the groups of Pods the workload consists of.
	PodGroupTemplates []PodGroupTemplate `json:"podGroupTemplates"`
}

// TypedLocalObjectReference names an object in the same namespace.
type TypedLocalObjectReference struct {
	// APIGroup is the object's API group, empty for the core group.
	APIGroup string `json:"apiGroup,omitempty"`
	// Kind is the object's kind.
	Kind string `json:"kind"`
	// Name is the object's name.
	Name string `json:"name"`
}

// PodGroupTemplate is one group of a Workload, from which PodGroups are made.
type PodGroupTemplate struct {
	// Name identifies the template within its Workload.
	Name string `json:"name"`
	// SchedulingPolicy is how the group's Pods are scheduled.
	SchedulingPolicy PodGroupSchedulingPolicy `json:"schedulingPolicy"`
	// SchedulingConstraints restrict where the group may be placed.
	SchedulingConstraints *PodGroupSchedulingConstraints `json:"schedulingConstraints,omitempty"`
	// ResourceClaims are claims shared by the group's Pods.
	ResourceClaims []PodGroupResourceClaim `json:"resourceClaims,omitempty"`
	// DisruptionMode says whether the group is disrupted Pod by Pod or whole.
	DisruptionMode *string `json:"disruptionMode,omitempty"`
	// PriorityClassName is the group's priority class.
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Priority is the group's priority.
	Priority *int32 `json:"priority,omitempty"`
}

// PodGroupSchedulingPolicy holds exactly one of Basic and Gang.
type PodGroupSchedulingPolicy struct {
	// Basic schedules the Pods one by one.
	Basic *BasicSchedulingPolicy `json:"basic,omitempty"`
	// Gang schedules the Pods all or nothing.
	Gang *GangSchedulingPolicy `json:"gang,omitempty"`
}

// BasicSchedulingPolicy has no settings.
type BasicSchedulingPolicy struct{}

// GangSchedulingPolicy is all-or-nothing scheduling of MinCount Pods.
type GangSchedulingPolicy struct {
	// MinCount is how many Pods must be placeable together before any is
	// bound.
	MinCount int32 `json:"minCount"`
}

// PodGroupResourceClaim is a resource claim shared by a group's Pods.
type PodGroupResourceClaim struct {
	// Name identifies the claim within the group.
	Name string `json:"name"`
	// ResourceClaimName names an existing ResourceClaim.
	ResourceClaimName *string `json:"resourceClaimName,omitempty"`
	// ResourceClaimTemplateName names a ResourceClaimTemplate to claim from.
	ResourceClaimTemplateName *string `json:"resourceClaimTemplateName,omitempty"`
}

// PodGroupSchedulingConstraints restrict a group's placement.
type PodGroupSchedulingConstraints struct {
	// Topology are the topology constraints.
	Topology []TopologyConstraint `json:"topology,omitempty"`
}

// TopologyConstraint keeps a group within one value of a node label.
type TopologyConstraint struct {
	// Key is the node label.
	Key string `json:"key"`
}

// PodGroup is the runtime instance of a PodGroupTemplate that Pods name in
// spec.schedulingGroup.podGroupName. Its spec is immutable.
//
// +kubebuilder:object:root=true
type PodGroup struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the object's metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the PodGroup's immutable specification.
	Spec PodGroupSpec `json:"spec"`
	// Status is what the scheduler reports.
	Status PodGroupStatus `json:"status,omitempty"`
}

// PodGroupList is a list of PodGroups.
//
// +kubebuilder:object:root=true
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the list's metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PodGroups.
	Items []PodGroup `json:"items"`
}

// PodGroupSpec is a PodGroup's specification.
type PodGroupSpec struct {
	// PodGroupTemplateRef names the Workload template the group comes from.
	PodGroupTemplateRef *PodGroupTemplateReference `json:"podGroupTemplateRef"`
	// SchedulingPolicy is how the group's Pods are scheduled.
	SchedulingPolicy PodGroupSchedulingPolicy `json:"schedulingPolicy"`
	// SchedulingConstraints restrict where the group may be placed.
	SchedulingConstraints *PodGroupSchedulingConstraints `json:"schedulingConstraints,omitempty"`
	// ResourceClaims are claims shared by the group's Pods.
	ResourceClaims []PodGroupResourceClaim `json:"resourceClaims,omitempty"`
	// DisruptionMode says whether the group is disrupted Pod by Pod or whole.
	DisruptionMode *string `json:"disruptionMode,omitempty"`
	// PriorityClassName is the group's priority class.
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Priority is the group's priority.
	Priority *int32 `json:"priority,omitempty"`
}

// PodGroupTemplateReference names the template of a PodGroup.
type PodGroupTemplateReference struct {
	// Workload names a template of a Workload.
	Workload *WorkloadPodGroupTemplateReference `json:"workload"`
}

// WorkloadPodGroupTemplateReference names one template of one Workload.
type WorkloadPodGroupTemplateReference struct {
	// WorkloadName is the Workload in the PodGroup's namespace.
	WorkloadName string `json:"workloadName"`
	// PodGroupTemplateName is the template's name in it.
	PodGroupTemplateName string `json:"podGroupTemplateName"`
}

// PodGroupStatus is what the scheduler reports of a PodGroup.
type PodGroupStatus struct {
	// Conditions include PodGroupScheduled.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ResourceClaimStatuses are the claims made for the group.
	ResourceClaimStatuses []PodGroupResourceClaimStatus `json:"resourceClaimStatuses,omitempty"`
}

// PodGroupResourceClaimStatus is the claim made for one group claim.
type PodGroupResourceClaimStatus struct {
	// Name is the group claim's name.
	Name string `json:"name"`
	// ResourceClaimName is the claim made for it.
	ResourceClaimName *string `json:"resourceClaimName,omitempty"`
}
