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
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/runtime"

	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
	"github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// suite is the package's cluster and operator.
type suite struct{ *e2eutil.Suite }

var shared *suite

// suiteSyncFrequency is the node's volume resync period in this suite.
const suiteSyncFrequency = 10 * time.Second

func TestMain(m *testing.M) {
	e2eutil.RunSuite(m, e2eutil.SuiteOptions{
		Name:            "local e2e",
		StateDirPattern: "ray-operator-local-e2e-",
		MakeTarget:      "test-e2e",
		Cluster: cluster.Options{
			CertManager: true,
			// Secrets reach mounted volumes within 10 s instead of the
			// kubelet's minute: the mTLS Pods' init container waits for its
			// certificate, issued once the Pod has an IP, to show there.
			SyncFrequency: suiteSyncFrequency,
		},
		// Two waiting tests' clusters at once.
		Capacity:     e2eutil.ParallelNode,
		Schemes:      []func(*runtime.Scheme) error{scheduling.AddToScheme, certmanagerv1.AddToScheme},
		Operator:     true,
		OperatorArgs: operatorArgs(suiteFeatureGates),
		Started:      func(s *e2eutil.Suite) error { shared = &suite{s}; return nil },
	})
}

// suiteFeatureGates are the feature gates of the suite's operator.
// RayClusterMTLS: only clusters with tlsOptions.enabled (the mTLS sample)
// are affected. KubernetesWAS: only gang-labeled clusters (the
// gang-scheduling sample) are affected; RayClusterNetworkPolicy: only
// clusters with spec.networkPolicy. SidecarSubmitterRestart changes every
// SidecarMode RayJob: a test that needs the operator without it swaps the
// operator for its duration (withOperatorGates).
const suiteFeatureGates = "RayCronJob=true,SidecarSubmitterRestart=true,KubernetesWAS=true,GCSFaultToleranceEmbeddedStorage=true,RayClusterNetworkPolicy=true,RayClusterMTLS=true"

// operatorArgs are the suite's operator flags with gates as its feature
// gates.
func operatorArgs(gates string) []string {
	return []string{
		// Leaves the operator issues (the operator-issued mTLS sample
		// only) live 90 s, so that their renewal is seen (at 60 s, when a
		// third is left; the node rewrites the mounted files every
		// suiteSyncFrequency).
		"--mtls-certificate-duration=90s",
		"--feature-gates=" + gates,
	}
}

// withOperatorGates runs the suite's operator with gates instead of
// suiteFeatureGates until t ends, then restarts it with suiteFeatureGates.
// The operator serves every test, so t must not be parallel: go test runs
// the parallel tests only once the others are done.
func (s *suite) withOperatorGates(t *testing.T, gates string) {
	t.Helper()
	if err := s.RestartOperator(operatorArgs(gates)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.RestartOperator(operatorArgs(suiteFeatureGates)); err != nil {
			t.Error(err)
		}
	})
}
