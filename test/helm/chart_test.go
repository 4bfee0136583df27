// Package helm_test renders the Helm chart in helm-chart/ray-operator with the
// pinned helm binary and checks what it would install, without an API
// server: golden outputs, the operator's rules and CRDs against their
// generated sources, and every value's effect on the settings the operator
// parses from its Deployment. test/integration/helm installs it for real.
package helm_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the chart")

// goldenCases are the values files under testdata with a golden rendering;
// "default" is the chart's own values.
var goldenCases = []string{"default", "single-namespace", "webhook", "kuberay", "monitoring"}

// release is the release of a case, with extra --set values.
func release(c string, set ...string) helmchart.Release {
	r := helmchart.Release{Name: helmchart.ReleaseName, Namespace: helmchart.ReleaseNamespace, Set: set}
	if c != "default" {
		r.ValuesFiles = []string{filepath.Join("testdata", c+".values.yaml")}
	}
	return r
}

// renders memoizes `helm template` by its arguments: several tests look at
// the same rendering.
var renders sync.Map

type rendering struct {
	once     sync.Once
	manifest string
	err      error
}

// template renders r, once per process.
func template(t *testing.T, r helmchart.Release) (string, error) {
	t.Helper()
	v, _ := renders.LoadOrStore(strings.Join(r.Args(""), "\x00"), &rendering{})
	got := v.(*rendering)
	got.once.Do(func() { got.manifest, got.err = helmchart.Template(t, r) })
	return got.manifest, got.err
}

// render renders r and parses the objects.
func render(t *testing.T, r helmchart.Release) []*unstructured.Unstructured {
	t.Helper()
	manifest, err := template(t, r)
	if err != nil {
		t.Fatal(err)
	}
	return helmchart.Parse(t, manifest)
}

func TestHelmVersionMatchesMakefile(t *testing.T) {
	got, err := controlplane.MakefileVersion("HELM_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if got != helmchart.HelmVersion {
		t.Errorf("Makefile HELM_VERSION = %s, helmchart.HelmVersion = %s", got, helmchart.HelmVersion)
	}
}

func TestLint(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c, func(t *testing.T) {
			r := release(c)
			args := []string{"lint", "--strict", helmchart.Dir(t), "--namespace", r.Namespace}
			for _, f := range r.ValuesFiles {
				args = append(args, "--values", f)
			}
			if out, err := helmchart.Helm(t, args...); err != nil {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}
}

// TestGolden compares `helm template` of each case with
// testdata/<case>.golden.yaml; `go test ./test/helm -update` rewrites them.
// The CRD documents are left out: TestCRDsAreGenerated compares them with
// config/crd/bases, and they are megabytes.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c, func(t *testing.T) {
			manifest, err := template(t, release(c))
			if err != nil {
				t.Fatal(err)
			}
			got := goldenHeader + withoutCRDs(manifest)
			path := filepath.Join("testdata", c+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./test/helm -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("helm template differs from %s; if the change is intended, run go test ./test/helm -update (-want +got):\n%s", path, diff)
			}
		})
	}
}

const goldenHeader = "# helm template output of the chart (test/helm TestGolden), without the\n" +
	"# CustomResourceDefinitions, which TestCRDsAreGenerated checks.\n"

// documentStart splits helm's output into documents.
var documentStart = regexp.MustCompile(`(?m)^---\n`)

// withoutCRDs drops the CustomResourceDefinition documents of a manifest.
func withoutCRDs(manifest string) string {
	var kept []string
	for _, doc := range documentStart.Split(manifest, -1) {
		if strings.TrimSpace(doc) == "" || strings.Contains(doc, "\nkind: CustomResourceDefinition\n") {
			continue
		}
		kept = append(kept, doc)
	}
	return "---\n" + strings.Join(kept, "---\n")
}
