package helm_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
)

const keepAnnotation = "helm.sh/resource-policy"

// TestCRDsAreGenerated checks that the chart installs exactly the CRDs of
// config/crd/bases, with the release's labels and, unless crds.keep=false,
// the annotation that keeps them on `helm uninstall`; and none with
// crds.install=false.
func TestCRDsAreGenerated(t *testing.T) {
	bases := generatedCRDs(t)
	for _, tt := range []struct {
		name string
		set  []string
		keep bool
	}{
		{name: "default", keep: true},
		{name: "crds.keep=false", set: []string{"crds.keep=false"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, o := range render(t, release("default", tt.set...)) {
				if o.GetKind() != "CustomResourceDefinition" {
					continue
				}
				names = append(names, o.GetName())
				got := installcheck.Convert[apiextensionsv1.CustomResourceDefinition](t, o)
				want, ok := bases[got.Name]
				if !ok {
					t.Errorf("CRD %s is not in config/crd/bases", got.Name)
					continue
				}
				if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
					t.Errorf("CRD %s spec differs from config/crd/bases (-want +got):\n%s", got.Name, diff)
				}
				wantAnnotations := maps.Clone(want.Annotations)
				if tt.keep {
					wantAnnotations[keepAnnotation] = "keep"
				}
				if diff := cmp.Diff(wantAnnotations, got.Annotations); diff != "" {
					t.Errorf("CRD %s annotations (-want +got):\n%s", got.Name, diff)
				}
				if got.Labels["app.kubernetes.io/instance"] != helmchart.ReleaseName {
					t.Errorf("CRD %s labels %v lack the release's", got.Name, got.Labels)
				}
			}
			if diff := cmp.Diff(slices.Sorted(maps.Keys(bases)), names); diff != "" {
				t.Errorf("CRDs (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("crds.install=false", func(t *testing.T) {
		for _, o := range render(t, release("default", "crds.install=false")) {
			if o.GetKind() == "CustomResourceDefinition" {
				t.Errorf("crds.install=false renders CRD %s", o.GetName())
			}
		}
	})
}

// generatedCRDs reads config/crd/bases by CRD name.
func generatedCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(installcheck.ModuleRoot(t), "config", "crd", "bases", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[crd.Name] = crd
	}
	return out
}
