package raycluster_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
)

// TestMillionReplicasDoNotStarveOtherClusters: a cluster asking for a
// million workers is served MaxPodWritesPerPass Pods per pass, so a small
// cluster created after it still gets its Pods at once from the same
// single-worker controller (KubeRay would create all million in one pass
// first).
func TestMillionReplicasDoNotStarveOtherClusters(t *testing.T) {
	w := newWorld(t, func(o *raycluster.Options) { o.MaxPodWritesPerPass = 50 })
	huge := group("huge", 1_000_000)
	huge.MaxReplicas = ptr.To[int32](1_000_000)
	w.Create(w.newCluster("million", huge))
	w.Eventually("the million-replica cluster's first Pods", func() (bool, error) {
		return len(w.Pods("million", nil)) > 50, nil
	})
	w.Create(w.newCluster("small", group("workers", 2)))
	w.WaitPods("small", nil, 3)
	if n := len(w.Pods("million", nil)); n > 100_000 {
		t.Errorf("the million-replica cluster already has %d Pods; the small one should not have waited for them", n)
	}
}

// TestTenThousandWorkerGroupsRefusedClearly: a spec too large for the API
// server is refused at create time with its reason, before the operator
// sees it.
func TestTenThousandWorkerGroupsRefusedClearly(t *testing.T) {
	w := newWorld(t)
	groups := make([]rayv1.WorkerGroupSpec, 10_000)
	for i := range groups {
		groups[i] = group(fmt.Sprintf("g%d", i), 1)
	}
	err := w.Client.Create(t.Context(), w.newCluster("ten-thousand-groups", groups...))
	if err == nil {
		t.Fatal("a RayCluster with 10,000 worker groups was accepted")
	}
	if msg := err.Error(); !strings.Contains(msg, "larger than max") && !strings.Contains(msg, "too large") {
		t.Errorf("rejection does not say the spec is too large: %v", err)
	}
}
