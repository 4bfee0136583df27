package validation

import (
	"errors"
	"fmt"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// errIdleTerminationOwned refuses idleTerminationOptions in the cluster spec
// of a RayJob or a RayService: their clusters live as long as their owner
// says, and the idle check never touches them.
var errIdleTerminationOwned = errors.New("rayClusterSpec.idleTerminationOptions is only for standalone RayClusters: " +
	"a RayJob's or a RayService's cluster lives as long as its owner says")

func idleTermination(c *specCheck) error { return IdleTerminationOptions(c.spec) }

// IdleTerminationOptions checks spec.idleTerminationOptions (the CRD schema
// enforces the same; the controller and the webhook check it for the
// objects that bypass it).
func IdleTerminationOptions(spec *rayv1.RayClusterSpec) error {
	opts := spec.IdleTerminationOptions
	if opts == nil {
		return nil
	}
	switch opts.Policy {
	case rayv1.IdleTerminationSuspend, rayv1.IdleTerminationDelete:
	default:
		return fmt.Errorf("idleTerminationOptions.policy is %q; it must be %q or %q",
			opts.Policy, rayv1.IdleTerminationSuspend, rayv1.IdleTerminationDelete)
	}
	if opts.TimeoutSeconds < 1 {
		return fmt.Errorf("idleTerminationOptions.timeoutSeconds is %d; it must be at least 1", opts.TimeoutSeconds)
	}
	return nil
}

// OwnedIdleTermination refuses idleTerminationOptions in the cluster spec
// of a RayJob or a RayService.
func OwnedIdleTermination(spec *rayv1.RayClusterSpec) error {
	if spec != nil && spec.IdleTerminationOptions != nil {
		return errIdleTerminationOwned
	}
	return nil
}
