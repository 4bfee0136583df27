// Package v1 holds the ray.io/v1 API: the RayCluster, RayJob, RayService and
// RayCronJob custom resources, wire-compatible with KubeRay's ray.io/v1 so
// that manifests and clients written for KubeRay work unchanged.
//
// +kubebuilder:object:generate=true
// +k8s:openapi-gen=true
// +groupName=ray.io
package v1
