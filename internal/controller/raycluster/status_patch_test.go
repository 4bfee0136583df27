package raycluster

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// TestStatusPatchData: RayCluster's status write carries every field of the
// new status, zero quantities and fields equal to the old ones included, a
// null for each field (at any depth) the new status dropped, and no
// resourceVersion: it does not fail when the cluster changed since the
// pass read it.
func TestStatusPatchData(t *testing.T) {
	var sent []byte
	funcs := interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, err := patch.Data(obj)
			sent = data
			if err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
	rc := makeCluster("rc").obj()
	rc.Status = rayv1.RayClusterStatus{
		State: rayv1.Ready, DesiredCPU: resource.MustParse("1"),
		Endpoints: map[string]string{"dashboard": "8265", "gone": "1"}, Reason: "old",
	}
	c := fakeClientBuilder(testScheme(t)).WithObjects(rc).
		WithStatusSubresource(&rayv1.RayCluster{}).WithInterceptorFuncs(funcs).Build()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(rc), rc); err != nil {
		t.Fatal(err)
	}
	updated := &rayv1.RayClusterStatus{State: rayv1.Ready, DesiredCPU: resource.MustParse("1"), Endpoints: map[string]string{"dashboard": "8265"}}
	r := New(Deps{Core: managerdeps.Core{Client: c}}, Options{})
	if _, err := r.writeStatus(t.Context(), newScope(rc, DefaultMaxPodWritesPerPass), updated); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(sent, &got); err != nil {
		t.Fatal(err)
	}
	delete(got["status"].(map[string]any), "lastUpdateTime")
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
