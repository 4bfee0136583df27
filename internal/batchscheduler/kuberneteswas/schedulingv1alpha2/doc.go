// Package schedulingv1alpha2 holds the Workload and PodGroup kinds of
// Kubernetes' scheduling.k8s.io/v1alpha2 API (Kubernetes 1.36), in the
// shape the API server serves them, for the KubernetesWAS batch scheduler.
//
// k8s.io/api v0.37 ships scheduling/v1alpha3 and no longer v1alpha2, while
// the clusters KubeRay's plugin targets (and the local control plane, built
// from Kubernetes v1.36.3) serve v1alpha2; the operator keeps the newer
// k8s.io/api for everything else and speaks v1alpha2 through these types.
// Every field of the served spec is here, so that an Update of an object
// read from the server drops nothing.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.k8s.io
package schedulingv1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is scheduling.k8s.io/v1alpha2.
var GroupVersion = schema.GroupVersion{Group: "scheduling.k8s.io", Version: "v1alpha2"}

// AddToScheme registers Workload and PodGroup (and their lists) under
// GroupVersion.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Workload{}, &WorkloadList{}, &PodGroup{}, &PodGroupList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
