// Package client drives every ray.io/v1 kind through the generated typed
// client (pkg/client) against a real kube-apiserver: the clientset creates
// and applies, a shared informer factory lists and watches, listers read the
// informers' caches. No operator runs.
package client

import (
	"os"
	"testing"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m))
}
