package clusterowner

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Build returns the RayCluster named name that owner, of kind ownerKind,
// asks for: in the owner's namespace, with the owner's labels plus
// ray.io/originated-from-cr-name and ray.io/originated-from-crd, the owner's
// annotations, a copy of spec, and the owner as controller. Callers add what
// is theirs (hash annotations, a submitter sidecar).
func Build(owner client.Object, ownerKind, name string, spec *rayv1.RayClusterSpec) *rayv1.RayCluster {
	labels := maps.Clone(owner.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[rayv1.LabelOriginatedFromCRName] = owner.GetName()
	labels[rayv1.LabelOriginatedFromCRD] = ownerKind
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       owner.GetNamespace(),
			Labels:          labels,
			Annotations:     maps.Clone(owner.GetAnnotations()),
			OwnerReferences: []metav1.OwnerReference{ControllerRef(owner, ownerKind)},
		},
		Spec: *spec.DeepCopy(),
	}
}

// ControllerRef is the controller owner reference to owner, a ray.io/v1
// object of kind ownerKind, as controllerutil.SetControllerReference makes
// it (controller and blockOwnerDeletion set), without needing a scheme.
func ControllerRef(owner client.Object, ownerKind string) metav1.OwnerReference {
	return *metav1.NewControllerRef(owner, rayv1.GroupVersion.WithKind(ownerKind))
}

// OwnedBy are the labels of the clusters (and owner Services) an owner
// created: List selects with them.
func OwnedBy(owner client.Object, ownerKind string) client.MatchingLabels {
	return client.MatchingLabels{
		rayv1.LabelOriginatedFromCRName: owner.GetName(),
		rayv1.LabelOriginatedFromCRD:    ownerKind,
	}
}
