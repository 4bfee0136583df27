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
// test-e2e-local`, which runs ./test/e2e/..., leaves it to `make
// test-ray-versions`. At the end it prints a table of each release's
// cases: pass, fail or skip with the reason, and the time each took.
package rayversions_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// Environment variables `make test-ray-versions` sets.
const (
	venvEnv      = "RAY_OPERATOR_RAY_VENV"
	redisEnv     = "RAY_OPERATOR_REDIS_SERVER"
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
	cluster      *localcluster.Cluster
	kube         e2eutil.Kube
	versions     []*version.Version
	stateDir     string
	opErr        chan error
	stopOperator context.CancelFunc

	mu      sync.Mutex
	results []result
}

var shared *suite

func TestMain(m *testing.M) {
	localcluster.RunNodeIfChild()
	flag.Parse()
	if testing.Short() || os.Getenv(installerEnv) == "" {
		fmt.Printf("Ray versions: skipped (-short, or %s unset: make test-ray-versions sets it)\n", installerEnv)
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

// runSuite starts the cluster and the operator, runs the tests, prints the
// results and stops both; the exit code fails the package when either
// does not start.
func runSuite(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startSuite(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "Ray versions: starting:", err)
		return 1
	}
	shared = s
	code := m.Run()
	s.printResults(os.Stdout)
	s.stopOperator()
	if err := <-s.opErr; err != nil {
		fmt.Fprintln(os.Stderr, "Ray versions: operator:", err)
	}
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stopCancel()
	if err := s.cluster.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "Ray versions: stopping the local cluster:", err)
		return 1
	}
	if code == 0 {
		_ = os.RemoveAll(s.stateDir)
	}
	return code
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

func startSuite(ctx context.Context) (*suite, error) {
	versions, err := parseVersions(os.Getenv(versionsEnv))
	if err != nil {
		return nil, err
	}
	venv := os.Getenv(venvEnv)
	if venv == "" {
		return nil, fmt.Errorf("%s is not set (make test-ray-versions sets it from hack/ray-venv.sh)", venvEnv)
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
	stateDir, err := os.MkdirTemp("", "ray-operator-ray-versions-")
	if err != nil {
		return nil, err
	}
	c, err := startCluster(ctx, stateDir, filepath.Join(root, "config", "crd", "bases"), venv)
	if err != nil {
		return nil, err
	}
	s := &suite{cluster: c, versions: versions, stateDir: stateDir, opErr: make(chan error, 1)}
	if s.kube, err = newKube(c); err != nil {
		return nil, err
	}
	var opCtx context.Context
	opCtx, s.stopOperator = context.WithCancel(ctx)
	return s, e2eutil.RunOperator(opCtx, c.RESTConfig(), filepath.Join(stateDir, "operator.log"), s.opErr)
}

// startCluster starts the local cluster with the Ray installer, as `make
// run` does, on a node that advertises e2eutil.ParallelCapacity: every
// release's Pods fit by request at once.
func startCluster(ctx context.Context, stateDir, crds, venv string) (*localcluster.Cluster, error) {
	capacity, err := e2eutil.ParallelCapacity()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		StateDir:     stateDir,
		CRDDirs:      []string{crds},
		RayVenvDir:   venv,
		RayInstaller: os.Getenv(installerEnv),
		RedisServer:  os.Getenv(redisEnv),
		Capacity:     capacity,
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("Ray versions: cluster ready in %v (state in %s)\n", time.Since(began).Round(time.Millisecond), stateDir)
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
