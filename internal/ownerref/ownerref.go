// Package ownerref makes the controller owner reference that every object a
// RayCluster owns carries, so that builders can set it without a scheme.
package ownerref

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// ForCluster is the controller reference to cluster, identical to what
// controllerutil.SetControllerReference produces (controller and
// blockOwnerDeletion set).
func ForCluster(cluster *rayv1.RayCluster) metav1.OwnerReference {
	return *metav1.NewControllerRef(cluster, rayv1.GroupVersion.WithKind(rayv1.KindRayCluster))
}
