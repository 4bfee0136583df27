// Package gateway_test starts the local cluster with its Gateway API
// implementation (Traefik, local/internal/traefik: cluster.Options.Gateway)
// and sends real HTTP requests through a Gateway to Pods of the node,
// checking that an HTTPRoute's backend weights split them.
package gateway_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// shared is the package's cluster.
var shared *e2eutil.Suite

func TestMain(m *testing.M) {
	e2eutil.RunSuite(m, e2eutil.SuiteOptions{
		Name:            "local e2e (gateway)",
		StateDirPattern: "ray-operator-local-e2e-gateway-",
		MakeTarget:      "test-e2e",
		NoCRDs:          true,
		Cluster:         cluster.Options{Gateway: true},
		Schemes:         []func(*runtime.Scheme) error{gwv1.Install},
		Started:         func(s *e2eutil.Suite) error { shared = s; return nil },
	})
}
