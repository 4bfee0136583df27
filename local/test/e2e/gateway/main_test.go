// Package gateway_test starts the local cluster with its Gateway API
// implementation (Traefik, local/internal/traefik: cluster.Options.Gateway)
// and sends real HTTP requests through a Gateway to Pods of the node,
// checking that an HTTPRoute's backend weights split them.
package gateway_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
)

// Environment variables `make test-e2e` sets.
const (
	venvEnv  = "RAY_OPERATOR_RAY_VENV"
	redisEnv = "RAY_OPERATOR_REDIS_SERVER"
)

// suite is the package's cluster.
type suite struct {
	cluster  *localcluster.Cluster
	client   client.Client
	stateDir string
}

var shared *suite

func TestMain(m *testing.M) {
	localcluster.RunNodeIfChild()
	flag.Parse()
	if testing.Short() {
		fmt.Println("local e2e (gateway): skipped with -short")
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

// runSuite starts the cluster, runs the tests and stops it; the exit code
// fails the package when it does not start.
func runSuite(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startSuite(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "local e2e (gateway): starting the local cluster:", err)
		return 1
	}
	shared = s
	code := m.Run()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stopCancel()
	if err := s.cluster.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "local e2e (gateway): stopping the local cluster:", err)
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
	stateDir, err := os.MkdirTemp("", "ray-operator-local-e2e-gateway-")
	if err != nil {
		return nil, err
	}
	began := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		StateDir:    stateDir,
		RayVenvDir:  venv,
		RedisServer: os.Getenv(redisEnv),
		Gateway:     true,
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("local e2e (gateway): cluster and Traefik ready in %v (state in %s)\n", time.Since(began).Round(time.Millisecond), stateDir)
	s := &suite{cluster: c, stateDir: stateDir}
	scheme, err := testenv.NewScheme()
	if err != nil {
		return nil, err
	}
	if err := gwv1.Install(scheme); err != nil {
		return nil, err
	}
	if s.client, err = client.New(c.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	return s, nil
}
