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
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// Environment variables: the two `make test-e2e` sets, and the seed.
const (
	venvEnv  = "RAY_OPERATOR_RAY_VENV"
	redisEnv = "RAY_OPERATOR_REDIS_SERVER"
	// seedEnv fixes the seed the kill points are drawn from; without it
	// the seed is random. Either way it is printed first.
	seedEnv = "FAULTS_SEED"
)

// suite is the package's cluster and the operator binary its tests run
// and kill: each test its own operator process, watching only the test's
// namespace, so that the tests run side by side and a kill in one is no
// fault in another.
type suite struct {
	cluster   *localcluster.Cluster
	client    client.Client
	clientset kubernetes.Interface
	proxy     *dashboard.KubeProxy
	root      string
	stateDir  string
	binary    string
	seed      uint64
}

var shared *suite

func TestMain(m *testing.M) {
	localcluster.RunNodeIfChild()
	flag.Parse()
	if testing.Short() {
		fmt.Println("local e2e faults: skipped with -short")
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

// runSuite starts the cluster and the operator, runs the tests and stops
// both.
func runSuite(m *testing.M) int {
	seed, err := suiteSeed()
	if err != nil {
		fmt.Fprintln(os.Stderr, "local e2e faults:", err)
		return 1
	}
	fmt.Printf("local e2e faults: %s=%d\n", seedEnv, seed)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startSuite(ctx, seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "local e2e faults: starting:", err)
		return 1
	}
	shared = s
	code := m.Run()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stopCancel()
	if err := s.cluster.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "local e2e faults: stopping the local cluster:", err)
		return 1
	}
	if code == 0 {
		_ = os.RemoveAll(s.stateDir)
	} else {
		fmt.Printf("local e2e faults: state and operator logs (one directory per test namespace) kept in %s (%s=%d)\n", s.stateDir, seedEnv, seed)
	}
	return code
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

func startSuite(ctx context.Context, seed uint64) (*suite, error) {
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
	stateDir, err := os.MkdirTemp("", "ray-operator-local-faults-")
	if err != nil {
		return nil, err
	}
	binary, err := e2eutil.BuildOperator(ctx, root, stateDir)
	if err != nil {
		return nil, err
	}
	capacity, err := e2eutil.ParallelCapacity()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		Capacity:    capacity,
		StateDir:    stateDir,
		CRDDirs:     []string{filepath.Join(root, "config", "crd", "bases")},
		RayVenvDir:  venv,
		RedisServer: os.Getenv(redisEnv),
		Gateway:     true,
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("local e2e faults: cluster ready in %v (state in %s)\n", time.Since(began).Round(time.Millisecond), stateDir)
	s := &suite{cluster: c, root: root, stateDir: stateDir, binary: binary, seed: seed}
	return s, s.connect()
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
	ns := e2eutil.Namespace(t, s.client, dump)
	logDir := filepath.Join(s.stateDir, ns)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	op = e2eutil.NewOperator(s.binary, s.cluster.KubeconfigPath(), logDir, append(slices.Clone(operatorArgs), "--watch-namespace="+ns))
	if _, err := op.Start(); err != nil {
		t.Fatal(err)
	}
	return ns, op
}

// connect builds the suite's clients from the cluster's admin config.
func (s *suite) connect() error {
	scheme, err := testenv.NewScheme(gwv1.Install)
	if err != nil {
		return err
	}
	cfg := s.cluster.RESTConfig()
	if s.client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if s.clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	s.proxy, err = dashboard.NewKubeProxy(cfg)
	return err
}
