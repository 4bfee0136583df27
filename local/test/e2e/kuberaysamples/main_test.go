// Package kuberaysamples_test applies KubeRay's own RayCluster and RayJob
// samples (ray-operator/config/samples of the KubeRay release
// $RAY_OPERATOR_KUBERAY_SAMPLES, read from the Go module cache where `go mod
// download` puts KubeRay's operator module, never copied here) unchanged,
// each into a new namespace of the local cluster that `make run` starts,
// with the operator as `make run` runs it (its default feature gates, the
// node's default capacity), and waits for what a user waits for: a
// RayCluster ready with every worker Running and Ready and a job submitted
// to it succeeding; a RayJob SUCCEEDED; for the Redis samples, a detached
// actor surviving the deletion of the head Pod. One sample at a time, as
// on a new 2-core machine; the time each took is printed in a table at the
// end. `make test-kuberay-samples` runs it (docs/dev/kuberay-samples.md).
package kuberaysamples_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
	"github.com/ray-operator/ray-operator/local/internal/node"
)

// Environment variables `make test-kuberay-samples` sets.
const (
	venvEnv  = "RAY_OPERATOR_RAY_VENV"
	redisEnv = "RAY_OPERATOR_REDIS_SERVER"
	// versionEnv is the KubeRay release whose samples run; unset, the
	// package does nothing (`make test-e2e-local` runs ./test/e2e/...).
	versionEnv = "RAY_OPERATOR_KUBERAY_SAMPLES"
)

// suite is the package's cluster, operator and samples.
type suite struct {
	cluster *localcluster.Cluster
	kube    e2eutil.Kube
	// samples is the directory of KubeRay's samples, read-only in the
	// module cache; version the release they come from.
	samples, version string
	stateDir         string
	opErr            chan error
	stopOperator     context.CancelFunc

	mu      sync.Mutex
	results []result
}

var shared *suite

func TestMain(m *testing.M) {
	localcluster.RunNodeIfChild()
	flag.Parse()
	if testing.Short() || os.Getenv(versionEnv) == "" {
		fmt.Printf("KubeRay samples: skipped (-short, or %s unset: make test-kuberay-samples sets it)\n", versionEnv)
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

// runSuite starts the cluster and the operator, runs the samples, prints
// their table and stops both; the exit code fails the package when either
// does not start.
func runSuite(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startSuite(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "KubeRay samples: starting:", err)
		return 1
	}
	shared = s
	code := m.Run()
	s.printResults(os.Stdout)
	s.stopOperator()
	if err := <-s.opErr; err != nil {
		fmt.Fprintln(os.Stderr, "KubeRay samples: operator:", err)
	}
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stopCancel()
	if err := s.cluster.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "KubeRay samples: stopping the local cluster:", err)
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
		return nil, fmt.Errorf("%s is not set (make test-kuberay-samples sets it from hack/ray-venv.sh)", venvEnv)
	}
	if err := localcluster.CanHostPods(); err != nil {
		return nil, fmt.Errorf("this machine cannot run real pods: %w", err)
	}
	version := os.Getenv(versionEnv)
	samples, err := downloadSamples(ctx, version)
	if err != nil {
		return nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		return nil, err
	}
	stateDir, err := os.MkdirTemp("", "ray-operator-kuberay-samples-")
	if err != nil {
		return nil, err
	}
	c, err := startCluster(ctx, stateDir, filepath.Join(root, "config", "crd", "bases"), venv)
	if err != nil {
		return nil, err
	}
	s := &suite{cluster: c, samples: samples, version: version, stateDir: stateDir, opErr: make(chan error, 1)}
	if s.kube, err = newKube(c); err != nil {
		return nil, err
	}
	var opCtx context.Context
	opCtx, s.stopOperator = context.WithCancel(ctx)
	return s, e2eutil.RunOperator(opCtx, c.RESTConfig(), filepath.Join(stateDir, "operator.log"), s.opErr)
}

// startCluster starts the local cluster as `make run` does: its node
// advertises the default capacity (node.ChooseCapacity with no flags).
func startCluster(ctx context.Context, stateDir, crds, venv string) (*localcluster.Cluster, error) {
	machine, err := node.ReadMachine()
	if err != nil {
		return nil, err
	}
	capacity, err := node.ChooseCapacity(machine, "", "", "node-cpu", "node-memory")
	if err != nil {
		return nil, err
	}
	began := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		StateDir:     stateDir,
		CRDDirs:      []string{crds},
		RayVenvDir:   venv,
		RedisServer:  os.Getenv(redisEnv),
		Capacity:     capacity.Resources,
		CapacityNote: capacity.Note,
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("KubeRay samples: cluster ready in %v, the node advertises %s (state in %s)\n",
		time.Since(began).Round(time.Millisecond), capacity.Note, stateDir)
	return c, nil
}

// newKube is the suite's access to cluster c.
func newKube(c *localcluster.Cluster) (e2eutil.Kube, error) {
	scheme, err := testenv.NewScheme()
	if err != nil {
		return e2eutil.Kube{}, err
	}
	k := e2eutil.Kube{Kubeconfig: c.KubeconfigPath()}
	if k.Client, err = client.New(c.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		return k, err
	}
	k.Clientset, err = kubernetes.NewForConfig(c.RESTConfig())
	return k, err
}
