// Package faults_test runs the operator as its own process against the
// local cluster (real Ray) and SIGKILLs it at seeded random points while
// RayJobs run, then checks what must survive any kill: one Ray job per
// RayJob (counted in Ray's own job list), the right terminal state, and
// the cleanup the spec asks for; and while a RayService upgrades under
// HTTP load: no failed request, one new cluster, the old one deleted after
// its delay, the final status, on both the blue/green and the incremental
// path (through the local cluster's Traefik Gateway).
// docs/dev/reliability.md says how to rerun a failure with its seed.
package faults_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// seedEnv fixes the seed the kill points are drawn from; without it the
// seed is random. Either way it is printed first.
const seedEnv = "FAULTS_SEED"

// suite is the package's cluster and the operator binary its tests run
// and kill: each test its own operator process, watching only the test's
// namespace, so that the tests run side by side and a kill in one is no
// fault in another.
type suite struct {
	*e2eutil.Suite
	proxy  *dashboard.KubeProxy
	binary string
	seed   uint64
}

var shared = new(suite)

func TestMain(m *testing.M) {
	e2eutil.RunSuite(m, e2eutil.SuiteOptions{
		Name:            "local e2e faults",
		StateDirPattern: "ray-operator-local-faults-",
		MakeTarget:      "test-e2e",
		Cluster:         cluster.Options{Gateway: true},
		Capacity:        e2eutil.ParallelNode,
		Schemes:         []func(*runtime.Scheme) error{gwv1.Install},
		Prepare:         shared.prepare,
		Started:         shared.started,
		Finished:        shared.finished,
	})
}

// prepare chooses the seed and builds the operator binary.
func (s *suite) prepare(ctx context.Context, es *e2eutil.Suite, _ *cluster.Options) error {
	var err error
	if s.seed, err = suiteSeed(); err != nil {
		return err
	}
	fmt.Printf("local e2e faults: %s=%d\n", seedEnv, s.seed)
	s.binary, err = e2eutil.BuildOperator(ctx, es.Root, es.StateDir)
	return err
}

// started keeps the suite and its dashboard proxy.
func (s *suite) started(es *e2eutil.Suite) error {
	s.Suite = es
	var err error
	s.proxy, err = dashboard.NewKubeProxy(es.Cluster.RESTConfig())
	return err
}

// finished names the seed to rerun a failure with.
func (s *suite) finished(code int) {
	if code != 0 {
		fmt.Printf("local e2e faults: operator logs in one directory per test namespace; rerun with %s=%d\n", seedEnv, s.seed)
	}
}

// suiteSeed is FAULTS_SEED, or a random seed when it is not set.
func suiteSeed() (uint64, error) {
	v := os.Getenv(seedEnv)
	if v == "" {
		return rand.Uint64(), nil
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not an unsigned integer: %w", seedEnv, v, err)
	}
	return seed, nil
}

// namespaceWithOperator makes the test's namespace (e2eutil.Namespace,
// dump printing it on failure) and starts the test's own operator process,
// watching only that namespace (--watch-namespace) and logging into a
// directory named after it in the suite's state directory. The operator
// is stopped after the namespace is gone, since its finalizers are the
// operator's to remove.
func (s *suite) namespaceWithOperator(t *testing.T, dump func(ctx context.Context, ns string)) (string, *e2eutil.Operator) {
	t.Helper()
	var op *e2eutil.Operator
	t.Cleanup(func() { // cleanups run last first: this one after the namespace's
		if op == nil {
			return
		}
		if err := op.Stop(); err != nil {
			t.Errorf("stopping the operator: %v", err)
		}
	})
	ns := e2eutil.Namespace(t, s.Client, dump)
	logDir := filepath.Join(s.StateDir, ns)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	op = e2eutil.NewOperator(s.binary, s.Cluster.KubeconfigPath(), logDir, append(slices.Clone(operatorArgs), "--watch-namespace="+ns))
	if _, err := op.Start(); err != nil {
		t.Fatal(err)
	}
	return ns, op
}
