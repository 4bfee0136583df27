package raycronjob

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// TestSamplesPassValidation checks that every RayCronJob sample passes the
// operator's validation with the default feature gates, and that there is
// one per concurrency policy with the recommended history limits.
func TestSamplesPassValidation(t *testing.T) {
	files, err := filepath.Glob("../../../config/samples/ray-cronjob.*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policies := map[rayv1.ConcurrencyPolicy]bool{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cj := &rayv1.RayCronJob{}
			if err := yaml.UnmarshalStrict(raw, cj); err != nil {
				t.Fatal(err)
			}
			if err := validation.RayCronJobMetadata(cj.ObjectMeta); err != nil {
				t.Errorf("metadata: %v", err)
			}
			if err := validation.RayCronJobSpec(cj, features.NewGate()); err != nil {
				t.Errorf("spec: %v", err)
			}
			if l := cj.Spec.SuccessfulJobsHistoryLimit; l == nil || *l != 3 {
				t.Errorf("successfulJobsHistoryLimit %v, want the recommended 3", l)
			}
			if l := cj.Spec.FailedJobsHistoryLimit; l == nil || *l != 1 {
				t.Errorf("failedJobsHistoryLimit %v, want the recommended 1", l)
			}
			policies[cj.Spec.ConcurrencyPolicy] = true
		})
	}
	for _, p := range []rayv1.ConcurrencyPolicy{rayv1.AllowConcurrent, rayv1.ForbidConcurrent, rayv1.ReplaceConcurrent} {
		if !policies[p] {
			t.Errorf("no sample with concurrencyPolicy %s", p)
		}
	}
}
