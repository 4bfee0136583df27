package api

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

const samplesDir = "../../../config/samples"

// TestSamplesAreAccepted creates every object of every sample with strict
// field validation and checks that the ray.io objects read back with their
// spec intact (nothing pruned; defaults may only add fields).
func TestSamplesAreAccepted(t *testing.T) {
	env := testenv.Shared(t)
	files, err := filepath.Glob(filepath.Join(samplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 17 {
		t.Fatalf("found %d samples in %s, want at least 17", len(files), samplesDir)
	}
	seenKinds := map[string]int{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ns := env.Namespace(t)
			for _, obj := range decodeAll(t, readFile(t, file)) {
				obj.SetNamespace(ns)
				sent := obj.DeepCopy()
				if err := env.Client.Create(t.Context(), obj, strict); err != nil {
					t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
				if obj.GetAPIVersion() != "ray.io/v1" {
					continue
				}
				seenKinds[obj.GetKind()]++
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(obj.GroupVersionKind())
				if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), got); err != nil {
					t.Fatalf("reading back %s: %v", obj.GetName(), err)
				}
				if missing := missingFields(sent.Object["spec"], got.Object["spec"], "spec"); len(missing) > 0 {
					t.Errorf("%s %s lost fields on the way through the API server:\n%s",
						obj.GetKind(), obj.GetName(), cmp.Diff([]string(nil), missing))
				}
			}
		})
	}
	for _, kind := range []string{"RayCluster", "RayJob", "RayService", "RayCronJob"} {
		if seenKinds[kind] == 0 {
			t.Errorf("no sample creates a %s", kind)
		}
	}
}

// missingFields lists the paths present in sent but absent or different in
// got. Extra fields in got (server defaults) are allowed.
func missingFields(sent, got any, path string) []string {
	switch s := sent.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for k, v := range s {
			out = append(out, missingFields(v, g[k], path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(s) {
			return []string{path}
		}
		var out []string
		for i := range s {
			out = append(out, missingFields(s[i], g[i], path+"[]")...)
		}
		return out
	default:
		if sf, ok := asFloat(sent); ok {
			if gf, ok := asFloat(got); ok && sf == gf {
				return nil
			}
			return []string{path}
		}
		if !cmp.Equal(sent, got) {
			return []string{path}
		}
		return nil
	}
}

// asFloat widens the numeric types JSON and YAML decoders produce, which
// differ between the sample decoder (float64) and the client (int64).
func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	default:
		return 0, false
	}
}
