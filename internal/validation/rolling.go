package validation

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// errRollingUpdateOwned refuses upgradeStrategy RollingUpdate in the
// cluster spec of a RayJob or a RayService: their owner replaces their
// cluster (KubeRay refuses every upgradeStrategy there at the RayCluster).
var errRollingUpdateOwned = errors.New("upgradeStrategy RollingUpdate is only for standalone RayClusters: " +
	"a RayJob's or a RayService's cluster is replaced by its owner")

// errBothZero: with neither an extra Pod nor an unready one allowed, no Pod
// could ever be replaced.
var errBothZero = errors.New("upgradeStrategy.rollingUpdate: maxUnavailable and maxSurge may not both be 0: no Pod could ever be replaced")

// RollingUpdateOptions checks upgradeStrategy.rollingUpdate and, with type
// RollingUpdate, that every worker group can be rolled (not KubeRay's).
func RollingUpdateOptions(spec *rayv1.RayClusterSpec) error {
	s := spec.UpgradeStrategy
	if s == nil {
		return nil
	}
	rolling := s.Type != nil && *s.Type == rayv1.RayClusterRollingUpdate
	if s.RollingUpdate != nil && !rolling {
		return fmt.Errorf("upgradeStrategy.rollingUpdate may be set only with upgradeStrategy.type %s", rayv1.RayClusterRollingUpdate)
	}
	if !rolling {
		return nil
	}
	for i := range spec.WorkerGroupSpecs {
		if g := &spec.WorkerGroupSpecs[i]; g.NumOfHosts > 1 {
			return fmt.Errorf("upgradeStrategy RollingUpdate does not support worker group %s with numOfHosts %d: "+
				"its Pods can only be replaced a whole replica at a time", g.GroupName, g.NumOfHosts)
		}
	}
	if s.RollingUpdate == nil {
		return nil
	}
	surgeZero, err := rollingLimit("maxSurge", s.RollingUpdate.MaxSurge, false)
	if err != nil {
		return err
	}
	unavailableZero, err := rollingLimit("maxUnavailable", s.RollingUpdate.MaxUnavailable, true)
	if err != nil {
		return err
	}
	if surgeZero && unavailableZero {
		return errBothZero
	}
	return nil
}

// rollingLimit checks one limit, a non-negative number or percentage (at
// most 100% for maxUnavailable), and reports whether it is 0. Unset is the
// default, 25%.
func rollingLimit(name string, v *intstr.IntOrString, capped bool) (bool, error) {
	if v == nil {
		return false, nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return false, fmt.Errorf("upgradeStrategy.rollingUpdate.%s is %d; it must not be negative", name, v.IntVal)
		}
		return v.IntVal == 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil || !strings.HasSuffix(v.StrVal, "%") || n < 0 || (capped && n > 100) {
		limit := "a non-negative integer or percentage"
		if capped {
			limit = "a non-negative integer or a percentage of at most 100%"
		}
		return false, fmt.Errorf("upgradeStrategy.rollingUpdate.%s is %q; it must be %s, e.g. 1 or \"25%%\"", name, v.StrVal, limit)
	}
	return n == 0, nil
}

// OwnedRollingUpdate refuses upgradeStrategy RollingUpdate (or its options)
// in the cluster spec of a RayJob or a RayService.
func OwnedRollingUpdate(spec *rayv1.RayClusterSpec) error {
	if spec == nil || spec.UpgradeStrategy == nil {
		return nil
	}
	s := spec.UpgradeStrategy
	if s.RollingUpdate != nil || (s.Type != nil && *s.Type == rayv1.RayClusterRollingUpdate) {
		return errRollingUpdateOwned
	}
	return nil
}
