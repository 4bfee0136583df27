package node

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/imagestore"
)

func TestImageGCPolicy(t *testing.T) {
	const gib = int64(1) << 30
	tests := map[string]struct {
		total, free, stored int64
		want                imagestore.GCPolicy
		wantDue             bool
	}{
		"at the high threshold: nothing": {total: 100 * gib, free: 15 * gib, stored: 10 * gib},
		"above it: down to the low one": {
			total: 100 * gib, free: 10 * gib, stored: 30 * gib,
			want: imagestore.GCPolicy{LowBytes: 20 * gib, MinAge: 2 * time.Minute}, wantDue: true,
		},
		"more to free than the store holds: every unused image": {
			total: 100 * gib, free: 1 * gib, stored: 5 * gib,
			want: imagestore.GCPolicy{LowBytes: 0, MinAge: 2 * time.Minute}, wantDue: true,
		},
		"no file system size": {total: 0, free: 0, stored: gib},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, due := imageGCPolicy(tc.total, tc.free, tc.stored)
			if due != tc.wantDue || got != tc.want {
				t.Errorf("imageGCPolicy = %+v, %v; want %+v, %v", got, due, tc.want, tc.wantDue)
			}
		})
	}
}

// presentStore is a store that holds the images of its map.
type presentStore map[string]v1.Hash

func (s presentStore) Present(ref string) (imagestore.Image, bool, error) {
	d, ok := s[ref]
	return imagestore.Image{Digest: d}, ok, nil
}

func TestImagesInUse(t *testing.T) {
	h := func(c string) v1.Hash { return v1.Hash{Algorithm: "sha256", Hex: strings.Repeat(c, 32)} }
	store := presentStore{"reg/app:v2": h("a2"), "reg/init:v1": h("b1"), "reg/debug:v1": h("c1")}
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{
			InitContainers:      []corev1.Container{{Name: "init", Image: "reg/init:v1"}},
			Containers:          []corev1.Container{{Name: "main", Image: "reg/app:v2"}, {Name: "local", Image: "rayproject/ray:2.52.0"}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "reg/debug:v1"}}},
		},
		Status: corev1.PodStatus{
			// main still runs v1's digest: its tag moved since (Always).
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", ImageID: "reg/app@" + h("a1").String()}, {Name: "local", ImageID: "local://rayproject/ray:2.52.0"}},
		},
	}
	got := imagesInUse([]*corev1.Pod{pod, nil}, store)
	want := map[v1.Hash]bool{h("a1"): true, h("a2"): true, h("b1"): true, h("c1"): true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("in use (-want +got):\n%s", diff)
	}
}
