package operator

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ray-operator/ray-operator/internal/features"
)

func TestNewScheme(t *testing.T) {
	tests := map[string]struct {
		gates       string
		wantGateway bool
	}{
		"default gates include Gateway API": {wantGateway: true},
		"incremental upgrade off":           {gates: "RayServiceIncrementalUpgrade=false"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gate, err := features.Build(nil, tc.gates)
			if err != nil {
				t.Fatal(err)
			}
			scheme, err := NewScheme(gate)
			if err != nil {
				t.Fatalf("NewScheme() error = %v", err)
			}
			for _, gvk := range []schema.GroupVersionKind{
				{Version: "v1", Kind: "Pod"},
				{Group: "batch", Version: "v1", Kind: "Job"},
				{Group: "ray.io", Version: "v1", Kind: "RayCluster"},
				{Group: "ray.io", Version: "v1", Kind: "RayCronJob"},
				{Group: "route.openshift.io", Version: "v1", Kind: "Route"},
			} {
				if !scheme.Recognizes(gvk) {
					t.Errorf("scheme does not know %v", gvk)
				}
			}
			gw := schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}
			if got := scheme.Recognizes(gw); got != tc.wantGateway {
				t.Errorf("scheme knows HTTPRoute = %v, want %v", got, tc.wantGateway)
			}
		})
	}
}

func TestCacheOptions(t *testing.T) {
	if got := cacheOptions("").DefaultNamespaces; got != nil {
		t.Errorf("empty watch namespace should watch all namespaces, got %v", got)
	}
	got := cacheOptions("a,b").DefaultNamespaces
	if _, ok := got["a"]; !ok || len(got) != 2 {
		t.Errorf("watch namespaces a,b gave %v", got)
	}
	if n := len(cacheOptions("").ByObject); n != 2 {
		t.Errorf("want Pod and Job informers scoped by label, got %d entries", n)
	}
}
