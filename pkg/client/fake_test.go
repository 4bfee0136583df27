package client_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1ac "github.com/ray-operator/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"github.com/ray-operator/ray-operator/pkg/client/clientset/versioned/fake"
)

// TestFakeClientsetApply shows that the fake clientset merges server-side
// applies by field manager with the schema the apply configurations embed:
// two managers' fields add up, a manager's later apply removes what it no
// longer sets, and Extract returns what a manager applied.
func TestFakeClientsetApply(t *testing.T) {
	jobs := fake.NewClientset().RayV1().RayJobs("ns")
	apply := func(manager string, config *rayv1ac.RayJobApplyConfiguration) {
		t.Helper()
		if _, err := jobs.Apply(t.Context(), config, metav1.ApplyOptions{FieldManager: manager}); err != nil {
			t.Fatalf("apply as %s: %v", manager, err)
		}
	}
	apply("submitter", rayv1ac.RayJob("job", "ns").WithSpec(rayv1ac.RayJobSpec().
		WithEntrypoint("python main.py").WithMetadata(map[string]string{"owner": "data-team"})))
	apply("tagger", rayv1ac.RayJob("job", "ns").WithSpec(rayv1ac.RayJobSpec().
		WithMetadata(map[string]string{"cost-center": "42"})))
	apply("submitter", rayv1ac.RayJob("job", "ns").WithSpec(rayv1ac.RayJobSpec().
		WithEntrypoint("python main.py")))

	job, err := jobs.Get(t.Context(), "job", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"cost-center": "42"}, job.Spec.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if job.Spec.Entrypoint != "python main.py" {
		t.Errorf("entrypoint %q, want python main.py", job.Spec.Entrypoint)
	}
	extracted, err := rayv1ac.ExtractRayJob(job, "tagger")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"cost-center": "42"}, extracted.Spec.Metadata); diff != "" || extracted.Spec.Entrypoint != nil {
		t.Errorf("tagger's extract: metadata (-want +got):\n%s\nentrypoint %v, want none", diff, extracted.Spec.Entrypoint)
	}
}
