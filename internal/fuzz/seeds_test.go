package fuzz

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// addSamples adds every config/samples object of kind as a JSON seed.
func addSamples(f *testing.F, kind string) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no samples found: %v", err)
	}
	n := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		objs, err := testenv.DecodeObjects(data)
		if err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		for _, obj := range objs {
			if obj.GetKind() != kind {
				continue
			}
			obj.SetNamespace("default")
			seed, err := json.Marshal(obj.Object)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(seed)
			n++
		}
	}
	if n == 0 {
		f.Fatalf("no sample is a %s", kind)
	}
}
