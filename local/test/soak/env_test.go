package soak_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// env is the soak's cluster and the operator process under observation.
type env struct {
	cluster    *localcluster.Cluster
	client     client.Client
	operator   *e2eutil.Operator
	metricsURL string
	root       string
	stateDir   string
}

// operatorArgs are the faults suite's flags (leader election off: one
// operator, never restarted here) with the metrics endpoint on addr.
func operatorArgs(addr string) []string {
	return []string{
		"--use-kubernetes-proxy", "--enable-leader-election=false",
		"--metrics-addr=" + addr, "--health-probe-bind-address=0",
		"--log-stdout-encoder=console", "--zap-log-level=info",
	}
}

// startEnv builds the operator, starts the cluster and the operator, and
// registers their stop with t.
func startEnv(t *testing.T) *env {
	t.Helper()
	venv := os.Getenv(venvEnv)
	if venv == "" {
		t.Fatalf("%s is not set (make soak sets it from hack/ray-venv.sh)", venvEnv)
	}
	if err := localcluster.CanHostPods(); err != nil {
		t.Fatalf("this machine cannot run real pods: %v", err)
	}
	e := &env{}
	var err error
	if e.root, e.stateDir, err = dirs(); err != nil {
		t.Fatal(err)
	}
	binary, err := e2eutil.BuildOperator(t.Context(), e.root, e.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	e.cluster, err = localcluster.Start(context.WithoutCancel(t.Context()), localcluster.Options{
		StateDir:    e.stateDir,
		CRDDirs:     []string{filepath.Join(e.root, "config", "crd", "bases")},
		RayVenvDir:  venv,
		RedisServer: os.Getenv(redisEnv),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.stopCluster(t) })
	t.Logf("cluster ready in %v (state in %s)", time.Since(began).Round(time.Second), e.stateDir)
	if err := e.startOperator(binary); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.operator.Stop(); err != nil {
			t.Errorf("operator: %v", err)
		}
	})
	return e
}

// dirs are the repository root and a new state directory.
func dirs() (root, state string, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	if root, err = controlplane.ModuleRoot(wd); err != nil {
		return "", "", err
	}
	state, err = os.MkdirTemp("", "ray-operator-soak-")
	return root, state, err
}

// startOperator connects the client and starts the operator with its
// metrics on a free local port.
func (e *env) startOperator(binary string) error {
	scheme, err := testenv.NewScheme()
	if err != nil {
		return err
	}
	if e.client, err = client.New(e.cluster.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	e.metricsURL = "http://" + addr + "/metrics"
	e.operator = e2eutil.NewOperator(binary, e.cluster.KubeconfigPath(), e.stateDir, operatorArgs(addr))
	_, err = e.operator.Start()
	return err
}

// freeAddr is a local TCP address nothing listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// stopCluster stops the cluster; the state directory (operator logs
// included) is kept when t failed.
func (e *env) stopCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.cluster.Stop(ctx); err != nil {
		t.Errorf("stopping the local cluster: %v", err)
		return
	}
	if t.Failed() {
		t.Logf("state and operator logs kept in %s", e.stateDir)
		return
	}
	_ = os.RemoveAll(e.stateDir)
}

// inventory is what the cluster holds that a finished workload must give
// back: every Pod, and the node's sandboxes, netns, cgroups and the
// machine's nftables rules.
type inventory struct {
	pods []string
	host sandbox.Inventory
}

func (e *env) inventory(ctx context.Context) (inventory, error) {
	pods := &corev1.PodList{}
	if err := e.client.List(ctx, pods); err != nil {
		return inventory{}, err
	}
	inv := inventory{}
	for _, p := range pods.Items {
		inv.pods = append(inv.pods, p.Namespace+"/"+p.Name)
	}
	var err error
	inv.host, err = e.cluster.NodeInventory()
	return inv, err
}

// leaksSince lists what now holds beyond base.
func leaksSince(base, now inventory) []string {
	var out []string
	add := func(kind string, was, is []string) {
		for _, x := range is {
			if !slices.Contains(was, x) {
				out = append(out, kind+" "+x)
			}
		}
	}
	add("Pod", base.pods, now.pods)
	add("sandbox", base.host.Sandboxes, now.host.Sandboxes)
	add("netns", base.host.Netns, now.host.Netns)
	add("cgroup", base.host.Cgroups, now.host.Cgroups)
	if extra := now.host.NftRules - base.host.NftRules; extra > 0 {
		out = append(out, fmt.Sprintf("%d nftables rules beyond the %d before the first cycle", extra, base.host.NftRules))
	}
	return out
}

// waitNoLeaks waits until nothing beyond base is left (removal is
// asynchronous: Pods end after their grace period, the node then tears the
// sandbox down) and returns what is still left when ctx ends.
func (e *env) waitNoLeaks(ctx context.Context, base inventory) ([]string, error) {
	var left []string
	err := e2eutil.Poll(ctx, 2*time.Second, func() (bool, error) {
		now, err := e.inventory(ctx)
		if err != nil {
			return false, err
		}
		left = leaksSince(base, now)
		return len(left) == 0, nil
	})
	if err != nil && len(left) == 0 {
		return nil, fmt.Errorf("taking the inventory: %w", err)
	}
	return left, nil
}
