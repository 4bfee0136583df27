// Package kueue_test runs Kueue's own controller manager (local/internal/kueue:
// built from the sigs.k8s.io/kueue module the Makefile pins, with its CRDs,
// webhooks and certificate rotator) and the operator on one local cluster
// whose node runs real Ray, then queues RayJobs and RayClusters through
// Kueue's objects and checks what Kueue and the operator do with them.
// Each test has its own namespace, ClusterQueue and LocalQueue. Those that
// wait for real Ray jobs (admission in turn, preemption, MultiKueue) call
// t.Parallel() and run at once after the others (`make test-e2e-local`
// runs E2E_PARALLEL, 3, waiting tests at a time); the node advertises
// more CPUs than the machine has (e2eutil.ParallelCapacity) so that their
// Pods fit at once. Kueue's quotas, not the node, bound what runs.
package kueue_test

import (
	"testing"

	"github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// suite is the package's cluster, with Kueue, and operator.
type suite struct{ *e2eutil.Suite }

var shared *suite

func TestMain(m *testing.M) {
	e2eutil.RunSuite(m, e2eutil.SuiteOptions{
		Name:            "local e2e (kueue)",
		StateDirPattern: "ray-operator-local-e2e-kueue-",
		MakeTarget:      "test-e2e",
		Cluster:         cluster.Options{Kueue: true},
		Capacity:        e2eutil.ParallelNode,
		Operator:        true,
		Started:         func(s *e2eutil.Suite) error { shared = &suite{s}; return nil },
	})
}
