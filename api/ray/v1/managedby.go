package v1

// MultiKueueController is the spec.managedBy value that hands a RayCluster,
// RayJob or RayService to Kueue's MultiKueue, which runs it on a worker
// cluster; this operator then leaves the object alone. The other allowed
// value is KubeRayController.
const MultiKueueController = "kueue.x-k8s.io/multikueue"

// IsManagedByThisOperator reports whether an object whose spec.managedBy is
// managedBy is reconciled by this operator: yes when the field is absent or
// names KubeRayController.
func IsManagedByThisOperator(managedBy *string) bool {
	return managedBy == nil || *managedBy == KubeRayController
}
