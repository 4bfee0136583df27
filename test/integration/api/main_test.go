// Package api checks the generated ray.io/v1 CRDs against a real
// kube-apiserver: the samples are accepted, every validation rule rejects
// what it should with the intended message, and objects round-trip.
package api

import (
	"os"
	"testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.WithScheme(rayv1.AddToScheme)))
}
