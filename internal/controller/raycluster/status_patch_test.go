package raycluster

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestStatusPatchData: the patch carries every field of the new status,
// zero quantities and fields equal to the old ones included, and a null for
// each field (at any depth) the new status dropped.
func TestStatusPatchData(t *testing.T) {
	original := &rayv1.RayClusterStatus{
		State:      rayv1.Ready,
		DesiredCPU: resource.MustParse("1"),
		Endpoints:  map[string]string{"dashboard": "8265", "gone": "1"},
		Reason:     "old",
	}
	updated := &rayv1.RayClusterStatus{
		State:      rayv1.Ready,
		DesiredCPU: resource.MustParse("1"),
		Endpoints:  map[string]string{"dashboard": "8265"},
	}
	data, err := statusPatchData(original, updated)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": map[string]any{
		"state": "ready", "desiredCPU": "1", "desiredMemory": "0", "desiredGPU": "0", "desiredTPU": "0",
		"endpoints": map[string]any{"dashboard": "8265", "gone": nil},
		"head":      map[string]any{},
		"reason":    nil,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
}
