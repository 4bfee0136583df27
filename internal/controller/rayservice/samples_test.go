package rayservice

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
)

// TestSamplesPassValidation checks that every RayService sample passes the
// operator's validation with the default feature gates, as the docs say
// they work.
func TestSamplesPassValidation(t *testing.T) {
	files, err := filepath.Glob("../../../config/samples/ray-service.*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("found %d RayService samples (%v), want at least 3", len(files), err)
	}
	r := New(Deps{}, Options{Features: features.NewGate()})
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rs := &rayv1.RayService{}
			if err := yaml.UnmarshalStrict(raw, rs); err != nil {
				t.Fatal(err)
			}
			if err := r.validate(rs); err != nil {
				t.Errorf("validation: %v", err)
			}
		})
	}
}
