package raycluster_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
	"github.com/ray-operator/ray-operator/internal/validation"
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

// TestLargestAcceptedRayClusters: the largest RayClusters the API server
// stores (etcd refuses requests over 1.5 MiB) are either reconciled with
// valid child names, or refused by validation with a condition naming the
// field, and the operator's heap does not grow with passes over them.
//   - LargestWorkerGroups groups with names at the label limit in a
//     53-character cluster (~1.46 MB): 2 % more is refused by the API
//     server; this one gets its head and two workers, and its status.
//   - One head rayStartParam of LargestRayStartParam bytes: stored, but no
//     Pod could carry it (nor Linux start it), so validation refuses it.
func TestLargestAcceptedRayClusters(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	name := wrappers.LongName("c", 0, validation.MaxRayClusterNameLength)

	err := w.Client.Create(ctx, wrappers.LargeRayCluster(name, w.NS, wrappers.LargestWorkerGroups*102/100))
	if err == nil || !strings.Contains(err.Error(), "request is too large") && !strings.Contains(err.Error(), "larger than max") {
		t.Fatalf("2 %% more worker groups than LargestWorkerGroups: error %v, want the API server's size limit", err)
	}

	rc := wrappers.LargeRayCluster(name, w.NS, wrappers.LargestWorkerGroups)
	data, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	before := heapAfterGC()
	w.Create(rc)
	groups := rc.Spec.WorkerGroupSpecs
	first, last := groups[0].GroupName, groups[len(groups)-1].GroupName
	w.WaitPods(name, headLabels(), 1)
	w.WaitPods(name, groupLabels(first), 1)
	w.WaitPods(name, groupLabels(last), 1)
	w.waitStatus(name, "its status", func(s *rayv1.RayClusterStatus) bool {
		return s.DesiredWorkerReplicas == 2 && meta.FindStatusCondition(s.Conditions, string(rayv1.RayClusterProvisioned)) != nil
	})
	reconciled := heapAfterGC()

	// Passes over it, brought by deleting a worker Pod that the operator
	// then replaces: the operator keeps one copy of the object, not one
	// per pass. The first replacement warms up what is sized once; the
	// heap is compared after it and after three more.
	replace := func() {
		old := w.WaitPods(name, groupLabels(first), 1)[0]
		if err := w.Client.Delete(ctx, &old); err != nil {
			t.Fatal(err)
		}
		w.Eventually("a new worker of "+first, func() (bool, error) {
			pods := w.Pods(name, groupLabels(first))
			return len(pods) == 1 && pods[0].UID != old.UID, nil
		})
	}
	replace()
	warm := heapAfterGC()
	for range 3 {
		replace()
	}
	after := heapAfterGC()
	t.Logf("%d worker groups, %d bytes of JSON: heap %.1f MB before, %.1f MB reconciled, %.1f MB after a Pod replaced, %.1f MB after three more",
		len(groups), len(data), mb(before), mb(reconciled), mb(warm), mb(after))
	if growth := int64(after) - int64(warm); growth > 3*int64(len(data)) {
		t.Errorf("the heap grew by %.1f MB over passes on a %.1f MB object", mb(uint64(growth)), mb(uint64(len(data))))
	}

	huge := wrappers.HugeParamRayCluster("huge-param", w.NS, wrappers.LargestRayStartParam)
	w.Create(huge)
	refused := w.waitStatus("huge-param", "ValidationFailed", func(s *rayv1.RayClusterStatus) bool {
		return meta.IsStatusConditionTrue(s.Conditions, string(rayv1.RayClusterValidationFailed))
	})
	if c := meta.FindStatusCondition(refused.Status.Conditions, string(rayv1.RayClusterValidationFailed)); !strings.HasPrefix(c.Message,
		fmt.Sprintf("headGroupSpec.rayStartParams hold %d bytes of keys and values, more than 65536", wrappers.LargestRayStartParam+len("system-config"))) {
		t.Errorf("ValidationFailed message %q", c.Message)
	}
	w.WaitEvent("huge-param", "InvalidRayClusterSpec")
	if n := len(w.Pods("huge-param", nil)); n != 0 {
		t.Errorf("%d Pods for a cluster whose Pods cannot be stored", n)
	}
	if err := w.Client.Create(ctx, wrappers.HugeParamRayCluster("huger-param", w.NS, wrappers.LargestRayStartParam+20_000)); err == nil {
		t.Error("a rayStartParam 20 kB over LargestRayStartParam was stored")
	}
}

// heapAfterGC is the live heap of the test process (the operator
// included): the least of ten collections 200 ms apart, so that a pass
// that happens to run (and holds copies of the cluster) does not count.
func heapAfterGC() uint64 {
	least := uint64(0)
	for i := range 10 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if i == 0 || m.HeapAlloc < least {
			least = m.HeapAlloc
		}
		time.Sleep(200 * time.Millisecond)
	}
	return least
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }

// TestPodsOfNamesAtTheLimits: the API server takes the Pods of groups whose
// names KubeRay turns into invalid Pod names or labels: a Pod name prefix
// cut at 50 characters right after a '.' of the group name, and a
// multi-host group named at the 63-character label limit (its replica
// name is a label too).
func TestPodsOfNamesAtTheLimits(t *testing.T) {
	w := newWorld(t)
	name := wrappers.LongName("c", 1, 40)
	dotted := group("dddddddd.x", 1)
	multiHost := group(wrappers.LongName("h", 0, 63), 1)
	multiHost.NumOfHosts = 2
	w.Create(w.newCluster(name, dotted, multiHost))
	w.WaitPods(name, groupLabels(dotted.GroupName), 1)
	for _, p := range w.WaitPods(name, groupLabels(multiHost.GroupName), 2) {
		if got := p.Labels[rayv1.LabelWorkerReplicaName]; len(got) != 63 {
			t.Errorf("replica name %q, want the group name and suffix clipped to 63 characters", got)
		}
	}
}
