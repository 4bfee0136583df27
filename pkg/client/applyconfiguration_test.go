package client_test

import (
	"reflect"
	"strings"
	"testing"

	rayv1ac "github.com/ray-operator/ray-operator/pkg/client/applyconfiguration/ray/v1"
)

// TestEmbeddedKubernetesStructsUseApplyConfigurations walks the apply
// configurations of every kind and fails on a field holding a k8s.io/api
// struct: one whose client-go apply configuration hack/client-gen.sh does not
// list, so that a server-side apply would send its zero-valued fields.
func TestEmbeddedKubernetesStructsUseApplyConfigurations(t *testing.T) {
	roots := []any{rayv1ac.RayCluster("", ""), rayv1ac.RayJob("", ""), rayv1ac.RayService("", ""), rayv1ac.RayCronJob("", "")}
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		if strings.HasPrefix(typ.PkgPath(), "k8s.io/api/") {
			t.Errorf("%s is a %s.%s, not its client-go apply configuration: add it to hack/client-gen.sh", path, typ.PkgPath(), typ.Name())
			return
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			walk(f.Type, path+"."+f.Name)
		}
	}
	for _, root := range roots {
		typ := reflect.TypeOf(root)
		walk(typ, typ.Elem().Name())
	}
	if len(seen) < 40 {
		t.Errorf("walked only %d struct types; the walk is broken", len(seen))
	}
}
