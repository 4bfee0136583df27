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
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// Environment variables `make test-e2e` sets.
const (
	venvEnv  = "RAY_OPERATOR_RAY_VENV"
	redisEnv = "RAY_OPERATOR_REDIS_SERVER"
)

// suite is the package's cluster and operator.
type suite struct {
	cluster  *localcluster.Cluster
	client   client.WithWatch
	stateDir string
	opErr    chan error
	// stopOperator stops the operator alone; the cluster is stopped by
	// Stop, in order.
	stopOperator context.CancelFunc
}

var shared *suite

func TestMain(m *testing.M) {
	localcluster.RunNodeIfChild()
	flag.Parse()
	if testing.Short() {
		fmt.Println("local e2e (kueue): skipped with -short")
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

// runSuite starts the cluster, Kueue and the operator, runs the tests and
// stops them; the exit code fails the package when any does not start.
func runSuite(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startSuite(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "local e2e (kueue): starting the local cluster:", err)
		return 1
	}
	shared = s
	code := m.Run()
	s.stopOperator()
	if err := <-s.opErr; err != nil {
		fmt.Fprintln(os.Stderr, "local e2e (kueue): operator:", err)
	}
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stopCancel()
	if err := s.cluster.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "local e2e (kueue): stopping the local cluster:", err)
		return 1
	}
	if code == 0 {
		_ = os.RemoveAll(s.stateDir)
	}
	return code
}

func startSuite(ctx context.Context) (*suite, error) {
	venv := os.Getenv(venvEnv)
	if venv == "" {
		return nil, fmt.Errorf("%s is not set (make test-e2e sets it from hack/ray-venv.sh)", venvEnv)
	}
	if err := localcluster.CanHostPods(); err != nil {
		return nil, fmt.Errorf("this machine cannot run real pods: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		return nil, err
	}
	stateDir, err := os.MkdirTemp("", "ray-operator-local-e2e-kueue-")
	if err != nil {
		return nil, err
	}
	capacity, err := e2eutil.ParallelCapacity()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		StateDir:    stateDir,
		CRDDirs:     []string{filepath.Join(root, "config", "crd", "bases")},
		RayVenvDir:  venv,
		RedisServer: os.Getenv(redisEnv),
		Kueue:       true,
		Capacity:    capacity,
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("local e2e (kueue): cluster and Kueue ready in %v (state in %s)\n", time.Since(began).Round(time.Millisecond), stateDir)
	s := &suite{cluster: c, stateDir: stateDir, opErr: make(chan error, 1)}
	scheme, err := testenv.NewScheme()
	if err != nil {
		return nil, err
	}
	if s.client, err = client.NewWithWatch(c.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	return s, s.startOperator(ctx)
}

// startOperator runs the operator in-process as ray-local does against its
// own cluster, with its default feature gates and its log in the state
// directory.
func (s *suite) startOperator(ctx context.Context) error {
	ctx, s.stopOperator = context.WithCancel(ctx)
	return e2eutil.RunOperator(ctx, s.cluster.RESTConfig(), filepath.Join(s.stateDir, "operator.log"), s.opErr)
}
