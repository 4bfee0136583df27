// Package cluster_test runs the whole chain on one machine with real Ray:
// the local cluster (local/internal/cluster: control plane, cluster DNS,
// kube-proxy, and a node whose pods are processes from the cached Ray
// virtualenv) and the operator as `make run` runs it, then applies manifests
// and waits for what a user would see. One cluster serves the package.
//
// Tests that start Ray and then mostly wait (idle thresholds, upgrade
// deadlines, certificate renewal, rolling batches, restarts) call
// t.Parallel(): go test runs them after the others, three at a time
// (`make test-e2e-local` passes -parallel $(E2E_PARALLEL), 3; go test's
// default is GOMAXPROCS), on a node that advertises more CPUs than the
// machine has (e2eutil.ParallelCapacity) so that all of them fit. The
// rest run one after another, alone on the machine's two CPUs: they
// measure the node (metrics, isolation), time a crash and its restart, or
// are short.
package cluster_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/operator"
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
	cluster   *localcluster.Cluster
	client    client.Client
	clientset kubernetes.Interface
	root      string // the repository
	stateDir  string
	opErr     chan error
	// stopOperator stops the operator alone: the cluster is stopped by
	// Stop, in order (the node deletes its Node while the API server runs),
	// not by canceling the context it started with.
	stopOperator context.CancelFunc
}

var shared *suite

// suiteSyncFrequency is the node's volume resync period in this suite.
const suiteSyncFrequency = 10 * time.Second

func TestMain(m *testing.M) {
	localcluster.RunNodeIfChild()
	flag.Parse()
	if testing.Short() {
		fmt.Println("local e2e: skipped with -short")
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

// runSuite starts the cluster and the operator, runs the tests and stops
// both; the exit code fails the package when either does not start.
func runSuite(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startSuite(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "local e2e: starting the local cluster:", err)
		return 1
	}
	shared = s
	code := m.Run()
	s.stopOperator()
	if err := <-s.opErr; err != nil {
		fmt.Fprintln(os.Stderr, "local e2e: operator:", err)
	}
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stopCancel()
	if err := s.cluster.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "local e2e: stopping the local cluster:", err)
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
	stateDir, err := os.MkdirTemp("", "ray-operator-local-e2e-")
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
		CertManager: true,
		// Secrets reach mounted volumes within 10 s instead of the
		// kubelet's minute: the mTLS Pods' init container waits for its
		// certificate, issued once the Pod has an IP, to show there.
		SyncFrequency: suiteSyncFrequency,
		// Two waiting tests' clusters at once.
		Capacity: capacity,
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("local e2e: cluster ready in %v (state in %s)\n", time.Since(began).Round(time.Millisecond), stateDir)
	s := &suite{cluster: c, root: root, stateDir: stateDir, opErr: make(chan error, 1)}
	scheme, err := testenv.NewScheme(scheduling.AddToScheme, certmanagerv1.AddToScheme)
	if err != nil {
		return nil, err
	}
	if s.client, err = client.New(c.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	if s.clientset, err = kubernetes.NewForConfig(c.RESTConfig()); err != nil {
		return nil, err
	}
	return s, s.startOperator(ctx, suiteFeatureGates)
}

// suiteFeatureGates are the feature gates of the suite's operator.
// RayClusterMTLS: only clusters with tlsOptions.enabled (the mTLS sample)
// are affected. KubernetesWAS: only gang-labeled clusters (the
// gang-scheduling sample) are affected; RayClusterNetworkPolicy: only
// clusters with spec.networkPolicy. SidecarSubmitterRestart changes every
// SidecarMode RayJob: a test that needs the operator without it swaps the
// operator for its duration (withOperatorGates).
const suiteFeatureGates = "RayCronJob=true,SidecarSubmitterRestart=true,KubernetesWAS=true,GCSFaultToleranceEmbeddedStorage=true,RayClusterNetworkPolicy=true,RayClusterMTLS=true"

// startOperator runs the operator in-process as ray-local does against its
// own cluster: through the API server's proxy, with gates as its feature
// gates and its log in the state directory.
func (s *suite) startOperator(ctx context.Context, gates string) error {
	ctx, s.stopOperator = context.WithCancel(ctx)
	fs := flag.NewFlagSet("ray-operator", flag.ContinueOnError)
	flags := operator.BindFlags(fs)
	err := fs.Parse([]string{
		"--use-kubernetes-proxy", "--enable-leader-election=false",
		"--metrics-addr=0", "--health-probe-bind-address=0",
		// Errors only on stdout, where go test prints results; everything
		// in the log file.
		"--log-file-path=" + filepath.Join(s.stateDir, "operator.log"), "--log-stdout-encoder=console", "--zap-log-level=error",
		// Leaves the operator issues (the operator-issued mTLS sample
		// only) live 90 s, so that their renewal is seen (at 60 s, when a
		// third is left; the node rewrites the mounted files every
		// suiteSyncFrequency).
		"--mtls-certificate-duration=90s",
		"--feature-gates=" + gates,
	})
	if err != nil {
		return err
	}
	settings, err := flags.Resolve(func(string) (string, bool) { return "", false })
	if err != nil {
		return err
	}
	// controller-runtime refuses a controller name a manager of this
	// process used before, even a stopped one: withOperatorGates starts
	// another.
	settings.SkipControllerNameValidation = true
	go func() { s.opErr <- operator.Run(ctx, settings, flags, s.cluster.RESTConfig()) }()
	return nil
}

// withOperatorGates runs the suite's operator with gates instead of
// suiteFeatureGates until t ends, then restarts it with suiteFeatureGates.
// The operator serves every test, so t must not be parallel: go test runs
// the parallel tests only once the others are done.
func (s *suite) withOperatorGates(t *testing.T, gates string) {
	t.Helper()
	if err := s.restartOperator(gates); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.restartOperator(suiteFeatureGates); err != nil {
			t.Error(err)
		}
	})
}

// restartOperator stops the operator and starts it again with gates. When
// it cannot start, the error stands in for what the operator returns, so
// that runSuite, which waits for that, still ends.
func (s *suite) restartOperator(gates string) error {
	s.stopOperator()
	if err := <-s.opErr; err != nil {
		fmt.Fprintln(os.Stderr, "local e2e: operator stopped for a restart:", err)
	}
	if err := s.startOperator(context.Background(), gates); err != nil {
		s.opErr <- err
		return fmt.Errorf("restarting the operator with feature gates %s: %w", gates, err)
	}
	return nil
}
