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

// idleTermination checks spec.idleTerminationOptions (also enforced by the
// CRD schema, checked here for the objects that bypass it).
func idleTermination(c *specCheck) error {
	opts := c.spec.IdleTerminationOptions
	if opts == nil {
		return nil
	}
	switch opts.Policy {
	case rayv1.IdleTerminationSuspend, rayv1.IdleTerminationDelete:
	default:
		return fmt.Errorf("idleTerminationOptions.policy is %q; it must be %q or %q",
			opts.Policy, rayv1.IdleTerminationSuspend, rayv1.IdleTerminationDelete)
	}
	if opts.IdleTimeoutSeconds < 1 {
		return fmt.Errorf("idleTerminationOptions.idleTimeoutSeconds is %d; it must be at least 1", opts.IdleTimeoutSeconds)
	}
	return nil
}

// noIdleTermination refuses idleTerminationOptions in an owned cluster's
// spec.
func noIdleTermination(spec *rayv1.RayClusterSpec) error {
	if spec != nil && spec.IdleTerminationOptions != nil {
		return errIdleTerminationOwned
	}
	return nil
}
