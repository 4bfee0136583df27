// Package soak_test is the soak of the local cluster (`make soak`, never
// part of `make test`; TestSoak skips itself unless SOAK_DURATION is set,
// the other tests check the soak's own arithmetic): for SOAK_DURATION it cycles RayJobs (one that
// succeeds, one that fails on purpose) and, every SOAK_UPGRADE_EVERY, an
// upgrade of the hello RayService, against the operator run as its own
// process; it samples the operator's RSS and goroutines, checks every
// RayJob's terminal state and every upgrade, and after deleting everything
// looks for leaked Pods, sandboxes, network namespaces, cgroups and
// nftables rules. It writes samples.csv, summary.md and memory.png under
// .cache/soak/<time>/. docs/dev/reliability.md (scenario 5) states the
// thresholds.
package soak_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
)

// TestMain lets the local cluster run its node process from this binary.
func TestMain(m *testing.M) {
	localcluster.RunNodeIfChild()
	os.Exit(m.Run())
}

// Environment variables: the two `make soak` sets like `make test-e2e`,
// and the soak's own knobs.
const (
	venvEnv         = "RAY_OPERATOR_RAY_VENV"
	redisEnv        = "RAY_OPERATOR_REDIS_SERVER"
	durationEnv     = "SOAK_DURATION"
	upgradeEveryEnv = "SOAK_UPGRADE_EVERY"
)

// Defaults of the knobs and the sampling period.
const (
	defaultUpgradeEvery = 5 * time.Minute
	sampleEvery         = 10 * time.Second
)

// config is what the environment asks of one soak.
type config struct {
	duration     time.Duration
	upgradeEvery time.Duration
}

// configFromEnv reads SOAK_DURATION and SOAK_UPGRADE_EVERY.
func configFromEnv() (config, error) {
	c := config{upgradeEvery: defaultUpgradeEvery}
	var err error
	if c.duration, err = positiveDuration(durationEnv, os.Getenv(durationEnv)); err != nil {
		return c, err
	}
	if v := os.Getenv(upgradeEveryEnv); v != "" {
		if c.upgradeEvery, err = positiveDuration(upgradeEveryEnv, v); err != nil {
			return c, err
		}
	}
	return c, nil
}

func positiveDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not a duration (e.g. 30m): %w", name, v, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s=%q must be positive", name, v)
	}
	return d, nil
}
