package fuzz

import (
	"reflect"
	"strings"
	"sync"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// apiFieldNames are the JSON names of every field reachable from the four
// kinds (pod templates included), lower-cased.
var apiFieldNames = sync.OnceValue(func() map[string]bool {
	seen := map[reflect.Type]bool{}
	names := map[string]bool{}
	for _, obj := range []any{rayv1.RayCluster{}, rayv1.RayJob{}, rayv1.RayService{}, rayv1.RayCronJob{}} {
		collectFieldNames(reflect.TypeOf(obj), seen, names)
	}
	return names
})

func collectFieldNames(t reflect.Type, seen map[reflect.Type]bool, names map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			// Messages name one item of a list field in the singular
			// ("workerGroupSpec", "container").
			names[strings.ToLower(name)] = true
			names[strings.TrimSuffix(strings.ToLower(name), "s")] = true
		}
		collectFieldNames(f.Type, seen, names)
	}
}

// namesAField reports whether a rejection message names a field of the API:
// a word that is a JSON field name (any case, so "Spec.UpgradeStrategy"
// counts), an annotation or label key of ray.io, or an environment variable
// of the Ray container (RAY_*), which are fields of the pod template.
func namesAField(msg string) bool {
	if strings.Contains(msg, "ray.io/") || strings.Contains(msg, "RAY_") {
		return true
	}
	words := strings.FieldsFunc(strings.ToLower(msg), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	for _, w := range words {
		if apiFieldNames()[w] {
			return true
		}
	}
	return false
}
