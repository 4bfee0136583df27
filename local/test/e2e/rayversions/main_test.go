// Package rayversions_test runs the operator against real Ray of several
// releases side by side on one local cluster (issue #50 item 3): for each
// release, a RayCluster whose worker is Ready under that release's probes,
// RayJobs in K8sJobMode and HTTPMode, the in-tree autoscaler adding a
// worker and GCS fault tolerance with Redis share one RayCluster; a
// RayService runs beside it on its own cluster. The node runs each Pod on
// the Ray release its image tag names (the installer of `make run`,
// hack/ray-venv.sh), and the tests check that release inside the Pods.
//
// RAY_VERSIONS (comma or space separated) chooses the releases; unset, the
// oldest and the newest (defaultVersions). The package needs the installer
// (RAY_OPERATOR_RAY_INSTALLER): unset, it does nothing, so that `make
// test-e2e-local`, which runs ./test/e2e/..., leaves it to its own stages:
// `make test` runs the default pair (test-e2e-ray-versions), `make
// test-ray-versions` every release. At the end it prints a table of each release's
// cases: pass, fail or skip with the reason, and the time each took.
package rayversions_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"

	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// Environment variables `make test-ray-versions` sets.
const (
	installerEnv = "RAY_OPERATOR_RAY_INSTALLER"
	versionsEnv  = "RAY_VERSIONS"
)

// defaultVersions are the releases run when RAY_VERSIONS is unset: the
// oldest the matrix covers (docs/dev/ray-versions.md, "Matrix versions":
// KubeRay documents Ray >= 2.0.0, but no release before 2.3.0 installs on
// Python 3.11, and 2.9.3 is the oldest the project installs) and the
// newest the project pins.
var defaultVersions = []string{"2.9.3", "2.60.0"}

// suite is the package's cluster, operator and results.
type suite struct {
	*e2eutil.Suite
	versions []*version.Version

	mu      sync.Mutex
	results []result
}

var shared = new(suite)

// TestMain starts the cluster with the Ray installer, as `make run` does,
// on a node that advertises e2eutil.ParallelCapacity: every release's
// Pods fit by request at once.
func TestMain(m *testing.M) {
	e2eutil.RunSuite(m, e2eutil.SuiteOptions{
		Name:            "Ray versions",
		StateDirPattern: "ray-operator-ray-versions-",
		MakeTarget:      "test-ray-versions",
		EnableEnv:       installerEnv,
		Capacity:        e2eutil.ParallelNode,
		Operator:        true,
		Prepare:         shared.prepare,
		Started:         func(s *e2eutil.Suite) error { shared.Suite = s; return nil },
		Finished:        func(int) { shared.printResults(os.Stdout) },
	})
}

// prepare reads the releases to run and gives the node the installer.
func (s *suite) prepare(_ context.Context, _ *e2eutil.Suite, o *localcluster.Options) error {
	var err error
	if s.versions, err = parseVersions(os.Getenv(versionsEnv)); err != nil {
		return err
	}
	o.RayInstaller = os.Getenv(installerEnv)
	return nil
}

// parseVersions reads RAY_VERSIONS' value: releases separated by commas or
// spaces, each X.Y.Z; empty, defaultVersions.
func parseVersions(value string) ([]*version.Version, error) {
	fields := strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 0 {
		fields = defaultVersions
	}
	var out []*version.Version
	for _, f := range fields {
		v, err := version.ParseSemantic(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a Ray release X.Y.Z: %w", versionsEnv, f, err)
		}
		out = append(out, v)
	}
	return out, nil
}
