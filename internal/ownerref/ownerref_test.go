package ownerref

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestForCluster(t *testing.T) {
	c := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "raycluster", Namespace: "ns", UID: "uid-1"}}
	want := metav1.OwnerReference{
		APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster", UID: "uid-1",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
	if diff := cmp.Diff(want, ForCluster(c)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
