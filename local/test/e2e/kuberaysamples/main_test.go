// Package kuberaysamples_test applies KubeRay's own RayCluster and RayJob
// samples (ray-operator/config/samples of the KubeRay release
// $RAY_OPERATOR_KUBERAY_SAMPLES, read from the Go module cache where `go mod
// download` puts KubeRay's operator module, never copied here) unchanged,
// each into a new namespace of the local cluster that `make run` starts,
// with the operator as `make run` runs it (its default feature gates, the
// node's default capacity), and waits for what a user waits for: a
// RayCluster ready with every worker Running and Ready and a job submitted
// to it succeeding; a RayJob SUCCEEDED; for the Redis samples, a detached
// actor surviving the deletion of the head Pod; for the autoscaler samples,
// a worker brought by a detached actor and removed once it is gone. As
// many samples at once as go test's -parallel, the node with `make run`'s
// default capacity on a 2-core machine; the time each took is printed in
// a table at the end. `make test-kuberay-samples` runs it (docs/dev/kuberay-samples.md).
package kuberaysamples_test

import (
	"context"
	"os"
	"sync"
	"testing"

	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// versionEnv is the KubeRay release whose samples run; unset, the package
// does nothing (`make test-e2e-local` runs ./test/e2e/...).
const versionEnv = "RAY_OPERATOR_KUBERAY_SAMPLES"

// suite is the package's cluster, operator and samples.
type suite struct {
	*e2eutil.Suite
	// samples is the directory of KubeRay's samples, read-only in the
	// module cache; version the release they come from.
	samples, version string

	mu      sync.Mutex
	results []result
}

var shared = new(suite)

// TestMain starts the cluster as `make run` does: the operator with its
// default feature gates, the node with its default capacity.
func TestMain(m *testing.M) {
	e2eutil.RunSuite(m, e2eutil.SuiteOptions{
		Name:            "KubeRay samples",
		StateDirPattern: "ray-operator-kuberay-samples-",
		MakeTarget:      "test-kuberay-samples",
		EnableEnv:       versionEnv,
		Capacity:        e2eutil.MakeRunNode,
		Operator:        true,
		Prepare:         shared.prepare,
		Started:         func(s *e2eutil.Suite) error { shared.Suite = s; return nil },
		Finished:        func(int) { shared.printResults(os.Stdout) },
	})
}

// prepare downloads the samples of the release versionEnv names.
func (s *suite) prepare(ctx context.Context, _ *e2eutil.Suite, _ *localcluster.Options) error {
	s.version = os.Getenv(versionEnv)
	var err error
	s.samples, err = downloadSamples(ctx, s.version)
	return err
}
