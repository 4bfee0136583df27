package api

import (
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// strict makes the API server reject unknown and duplicate fields instead of
// silently pruning them, so a schema that lacks a field fails loudly.
var strict = client.FieldValidation("Strict")

// decodeAll parses every YAML document of data into unstructured objects.
func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// decodeOne parses a single YAML document.
func decodeOne(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	objs := decodeAll(t, []byte(doc))
	if len(objs) != 1 {
		t.Fatalf("want one YAML document, got %d", len(objs))
	}
	return objs[0]
}

// yamlValue parses a YAML fragment into the generic value unstructured
// objects hold.
func yamlValue(t *testing.T, fragment string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(fragment), &v); err != nil {
		t.Fatalf("parsing YAML fragment %q: %v", fragment, err)
	}
	return v
}

// set replaces the value at path (dot-separated) with a parsed YAML fragment.
func set(t *testing.T, obj *unstructured.Unstructured, path, fragment string) {
	t.Helper()
	if err := unstructured.SetNestedField(obj.Object, yamlValue(t, fragment), strings.Split(path, ".")...); err != nil {
		t.Fatalf("setting %s: %v", path, err)
	}
}

// readFile reads a file or fails the test.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return data
}

// wantBadRequest checks that err is a BadRequest error whose message
// contains every fragment in want.
func wantBadRequest(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("request accepted, want it rejected with %q", want)
	}
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("want a BadRequest error, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
}

// wantInvalid checks that err is the API server's Invalid error and that its
// message contains every fragment in want.
func wantInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("request accepted, want it rejected with %q", want)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
}

const baseRayCluster = `
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: base
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
  workerGroupSpecs:
    - groupName: workers
      replicas: 1
      minReplicas: 0
      maxReplicas: 3
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-worker
              image: rayproject/ray:2.52.0
`

const baseRayJob = `
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: base
spec:
  entrypoint: python -c "print(1)"
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.52.0
`

const baseRayService = `
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: base
spec:
  serveConfigV2: |
    applications: []
  rayClusterConfig:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.52.0
`

const baseRayCronJob = `
apiVersion: ray.io/v1
kind: RayCronJob
metadata:
  name: base
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    entrypoint: python -c "print(1)"
    clusterSelector:
      ray.io/cluster: shared
`
