package incrementalupgrade

import (
	"errors"
	"fmt"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// DefaultMaxSurgePercent is maxSurgePercent when unset (the CRD default).
const DefaultMaxSurgePercent int32 = 100

// Options are a RayService's clusterUpgradeOptions with defaults applied.
type Options struct {
	// MaxSurgePercent is how far target_capacity moves per step.
	MaxSurgePercent int32
	// StepSizePercent is how far traffic moves per step.
	StepSizePercent int32
	// Interval is the least time between two traffic steps.
	Interval time.Duration
	// GatewayClassName is the class of the RayService's Gateway.
	GatewayClassName string
}

// ErrNoOptions is returned for a RayService that upgrades incrementally
// without clusterUpgradeOptions.
var ErrNoOptions = errors.New("ClusterUpgradeOptions are required for NewClusterWithIncrementalUpgrade")

// Requested reports whether a spec asks for NewClusterWithIncrementalUpgrade
// (whether the feature gate allows it is the caller's business).
func Requested(spec *rayv1.RayServiceSpec) bool {
	s := spec.UpgradeStrategy
	return s != nil && s.Type != nil && *s.Type == rayv1.RayServiceNewClusterWithIncrementalUpgrade
}

// Validate checks what an incremental upgrade needs, with KubeRay's
// messages: the in-tree autoscaler (a new cluster starts from minReplicas
// and grows with target_capacity), and complete, in-range options. An
// unset maxSurgePercent counts as its default rather than being
// dereferenced.
func Validate(spec *rayv1.RayServiceSpec) error {
	if a := spec.RayClusterSpec.EnableInTreeAutoscaling; a == nil || !*a {
		return errors.New("Ray Autoscaler is required for NewClusterWithIncrementalUpgrade") //nolint:staticcheck // KubeRay's message
	}
	o := spec.UpgradeStrategy.ClusterUpgradeOptions
	if o == nil {
		return ErrNoOptions
	}
	surge := DefaultMaxSurgePercent
	if o.MaxSurgePercent != nil {
		surge = *o.MaxSurgePercent
	}
	switch {
	case surge < 0 || surge > 100:
		return errors.New("maxSurgePercent must be between 0 and 100")
	case o.StepSizePercent == nil || *o.StepSizePercent < 0 || *o.StepSizePercent > 100:
		return errors.New("stepSizePercent must be between 0 and 100")
	case *o.StepSizePercent > surge:
		return errors.New("stepSizePercent must be less than or equal to maxSurgePercent")
	case o.IntervalSeconds == nil || *o.IntervalSeconds <= 0:
		return errors.New("intervalSeconds must be greater than 0")
	case o.GatewayClassName == "":
		return errors.New("gatewayClassName is required for NewClusterWithIncrementalUpgrade")
	}
	return nil
}

// OptionsOf returns the options of a spec that passed Validate.
func OptionsOf(spec *rayv1.RayServiceSpec) (Options, error) {
	if err := Validate(spec); err != nil {
		return Options{}, fmt.Errorf("invalid incremental upgrade: %w", err)
	}
	o := spec.UpgradeStrategy.ClusterUpgradeOptions
	opts := Options{
		MaxSurgePercent:  DefaultMaxSurgePercent,
		StepSizePercent:  *o.StepSizePercent,
		Interval:         time.Duration(*o.IntervalSeconds) * time.Second,
		GatewayClassName: o.GatewayClassName,
	}
	if o.MaxSurgePercent != nil {
		opts.MaxSurgePercent = *o.MaxSurgePercent
	}
	return opts, nil
}
