package installcheck

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Kustomize runs kustomize build on config/<dir>.
func Kustomize(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(ModuleRoot(t), "config", dir)
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), path)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", path, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resources.Resources() {
		// Through JSON, so that numbers are the int64 and float64 of
		// unstructured objects.
		data, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("kustomize build %s: %s: %v", path, r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatalf("kustomize build %s: %s: %v", path, r.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs
}
