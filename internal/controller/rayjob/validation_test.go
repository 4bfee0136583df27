package rayjob

import (
	"errors"
	"strings"
	"testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/invalidspec"
)

// TestValidateRayJobReasons checks that each validation layer (the rules
// are tested in internal/validation) is reported with its KubeRay event
// reason.
func TestValidateRayJobReasons(t *testing.T) {
	tests := map[string]struct {
		job        *rayv1.RayJob
		wantReason string
		wantText   string
	}{
		"metadata": {job: makeJob(func(j *rayv1.RayJob) { j.Name = strings.Repeat("a", 48) }),
			wantReason: "InvalidRayJobMetadata", wantText: "The RayJob metadata is invalid"},
		"spec": {job: makeJob(func(j *rayv1.RayJob) { j.Spec.Suspend = true }),
			wantReason: "InvalidRayJobSpec", wantText: "not allowed to be suspended"},
		"status": {job: makeJob(inState(rayv1.JobDeploymentStatusWaiting)),
			wantReason: "InvalidRayJobStatus", wantText: "cannot be `Waiting`"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := validateRayJob(tc.job, features.NewGate())
			var invalid *invalidspec.Error
			if !errors.As(err, &invalid) {
				t.Fatalf("error %v, want an *invalidspec.Error", err)
			}
			if invalid.Reason != tc.wantReason || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("reason %q error %q, want %q with %q", invalid.Reason, err, tc.wantReason, tc.wantText)
			}
		})
	}
	if err := validateRayJob(makeJob(), features.NewGate()); err != nil {
		t.Errorf("valid RayJob: %v", err)
	}
}
