package statuswrite

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// status is a status struct with what matters to a whole-status patch: a
// field always encoded (its zero value too), omitted ones, a nested map.
type status struct {
	Count  int               `json:"count"`
	State  string            `json:"state,omitempty"`
	Reason string            `json:"reason,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// TestData: the patch carries every field of the new status, zero values
// and fields equal to the old ones included, and a null for each field (at
// any depth) the new status dropped.
func TestData(t *testing.T) {
	original := &status{State: "ready", Reason: "old", Labels: map[string]string{"kept": "1", "gone": "1"}}
	updated := &status{State: "ready", Labels: map[string]string{"kept": "1"}}
	got, err := Data(original, updated)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"count": float64(0), "state": "ready", "reason": nil,
		"labels": map[string]any{"kept": "1", "gone": nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
}

// TestPatchCarriesResourceVersion: the patch of an object read with a
// resourceVersion carries it, one of a name-only copy does not.
func TestPatchCarriesResourceVersion(t *testing.T) {
	for rv, want := range map[string]string{
		"7": `{"metadata":{"resourceVersion":"7"},"status":{"active":null}}`,
		"":  `{"status":{"active":null}}`,
	} {
		p := wholeStatus{
			original: &rayv1.RayCronJobStatus{Active: []corev1.ObjectReference{{Name: "a"}}},
			updated:  &rayv1.RayCronJobStatus{}, resourceVersion: rv,
		}
		data, err := p.Data(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != want {
			t.Errorf("resourceVersion %q: patch %s, want %s", rv, data, want)
		}
	}
}

// TestWrite: a write stores the whole new status and drops what the new
// status dropped; a write of a status computed from an outdated read
// fails with a conflict, as an update does, unless the object it names
// carries no resourceVersion.
func TestWrite(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	stored := &rayv1.RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns"},
		Status:     rayv1.RayCronJobStatus{Active: []corev1.ObjectReference{{Name: "a"}}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(stored).Build()
	read := &rayv1.RayCronJob{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), read); err != nil {
		t.Fatal(err)
	}
	original := read.Status.DeepCopy()
	now := metav1.Now()
	read.Status = rayv1.RayCronJobStatus{LastScheduleTime: &now}
	stale := read.DeepCopy()
	if err := Write(t.Context(), c, read, original, &read.Status); err != nil {
		t.Fatal(err)
	}
	got := &rayv1.RayCronJob{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Active != nil || got.Status.LastScheduleTime == nil {
		t.Errorf("stored status %+v, want no active RayJob and a schedule time", got.Status)
	}
	if err := Write(t.Context(), c, stale, original, &stale.Status); !apierrors.IsConflict(err) {
		t.Errorf("write from an outdated read: error %v, want a conflict", err)
	}
	nameOnly := &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns"}}
	if err := Write(t.Context(), c, nameOnly, &got.Status, &rayv1.RayCronJobStatus{}); err != nil {
		t.Errorf("write without a resourceVersion: %v", err)
	}
}

// TestDataMatchesMergePatch: on random pairs of nested JSON objects, Data
// is the new object with a null for exactly each field a JSON merge patch
// from the old one to the new one removes (computed by json-patch, which
// Data used before).
func TestDataMatchesMergePatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		before, after := randomObject(rng, 3), randomObject(rng, 3)
		got, err := Data(before, after)
		if err != nil {
			t.Fatal(err)
		}
		want := mergePatchRemovals(t, before, after)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("case %d: before %v, after %v (-json-patch +Data):\n%s", i, before, after, diff)
		}
	}
}

// mergePatchRemovals is after with json-patch's merge patch's nulls added.
func mergePatchRemovals(t *testing.T, before, after map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	diff, err := jsonpatch.CreateMergePatch(b, a)
	if err != nil {
		t.Fatal(err)
	}
	var whole, changes map[string]any
	if err := json.Unmarshal(a, &whole); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(diff, &changes); err != nil {
		t.Fatal(err)
	}
	var add func(whole, changes map[string]any)
	add = func(whole, changes map[string]any) {
		for key, change := range changes {
			if change == nil {
				whole[key] = nil
				continue
			}
			inner, isMap := change.(map[string]any)
			if target, ok := whole[key].(map[string]any); isMap && ok {
				add(target, inner)
			}
		}
	}
	add(whole, changes)
	return whole
}

// randomObject is a JSON object over a few keys, so that two of them share
// some: strings, numbers, lists, nulls and objects down to depth.
func randomObject(rng *rand.Rand, depth int) map[string]any {
	out := map[string]any{}
	for _, key := range []string{"a", "b", "c", "d"} {
		switch v := rng.IntN(7); {
		case v == 0:
		case v == 1:
			out[key] = nil
		case v == 2:
			out[key] = []any{float64(rng.IntN(2))}
		case v == 3 || depth == 0:
			out[key] = fmt.Sprint(rng.IntN(2))
		default:
			out[key] = randomObject(rng, depth-1)
		}
	}
	return out
}
