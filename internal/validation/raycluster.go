package validation

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// MaxRayClusterNameLength keeps the longest child Service name,
// "<cluster>-serve-svc", within 63 characters.
const MaxRayClusterNameLength = 53

// RayClusterMetadata checks the RayCluster name (layer 1).
func RayClusterMetadata(obj metav1.ObjectMeta) error {
	if len(obj.Name) > MaxRayClusterNameLength {
		return fmt.Errorf("RayCluster name should be no more than %d characters", MaxRayClusterNameLength)
	}
	if errs := k8svalidation.IsDNS1035Label(obj.Name); len(errs) > 0 {
		return fmt.Errorf("RayCluster name should be a valid DNS1035 label: %v", errs)
	}
	return nil
}

// RayClusterUpgradeOptions checks spec.upgradeStrategy (layer 3): the type
// must be Recreate, None or (not KubeRay's) RollingUpdate, and clusters
// made by a RayJob or RayService may not set it, because their owner
// decides how they are replaced; RollingUpdate's options must be sound.
func RayClusterUpgradeOptions(cluster *rayv1.RayCluster) error {
	strategy := cluster.Spec.UpgradeStrategy
	if strategy == nil || (strategy.Type == nil && strategy.RollingUpdate == nil) {
		return nil
	}
	if strategy.Type != nil {
		switch t := *strategy.Type; t {
		case rayv1.RayClusterRecreate, rayv1.RayClusterUpgradeNone, rayv1.RayClusterRollingUpdate:
		default:
			//nolint:staticcheck // KubeRay's message (with our third value), for users and tools that match it
			return fmt.Errorf("The RayCluster spec is invalid: Spec.UpgradeStrategy.Type value %s is invalid, valid options are %s, %s or %s",
				t, rayv1.RayClusterRecreate, rayv1.RayClusterUpgradeNone, rayv1.RayClusterRollingUpdate)
		}
	}
	switch creator := cluster.Labels[rayv1.LabelOriginatedFromCRD]; creator {
	case creatorRayJob, creatorRayService:
		return fmt.Errorf("upgradeStrategy cannot be set when RayCluster is created by %s", creator)
	}
	return RollingUpdateOptions(&cluster.Spec)
}

// Creator kinds recorded in the ray.io/originated-from-crd label.
const (
	creatorRayJob     = "RayJob"
	creatorRayService = "RayService"
)

// errSuspendConditions is returned by RayClusterStatus.
var errSuspendConditions = errors.New("invalid RayCluster State: rayv1.RayClusterSuspending and rayv1.RayClusterSuspended conditions should not be both true")

// RayClusterStatus checks that the status the controller wrote is coherent
// (layer 4): a cluster is never suspending and suspended at once.
func RayClusterStatus(status *rayv1.RayClusterStatus) error {
	if meta.IsStatusConditionTrue(status.Conditions, string(rayv1.RayClusterSuspending)) &&
		meta.IsStatusConditionTrue(status.Conditions, string(rayv1.RayClusterSuspended)) {
		return errSuspendConditions
	}
	return nil
}
