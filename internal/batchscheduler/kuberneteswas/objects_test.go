package kuberneteswas

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// gangCluster is a RayCluster "rc" in "ns" with the gang label, a head and
// the worker group "small" of replicas Pods.
func gangCluster(replicas int32) *wrappers.RayClusterWrapper {
	w := wrappers.MakeRayCluster("rc", "ns").Label(batchscheduler.LabelGangSchedulingEnabled, "true")
	w.UID = types.UID("rc-uid")
	*w.RayCluster.Spec.WorkerGroupSpecs[0].Replicas = replicas
	return w
}

func TestSkipReason(t *testing.T) {
	for name, c := range map[string]struct {
		cluster *rayv1.RayCluster
		want    string
	}{
		"gang label true":        {gangCluster(1).Obj(), ""},
		"any case":               {gangCluster(1).Label(batchscheduler.LabelGangSchedulingEnabled, "TRUE").Obj(), ""},
		"no label":               {wrappers.MakeRayCluster("rc", "ns").Obj(), SkipReasonGangSchedulingDisabled},
		"label not true":         {gangCluster(1).Label(batchscheduler.LabelGangSchedulingEnabled, "").Obj(), SkipReasonGangSchedulingDisabled},
		"autoscaling is skipped": {gangCluster(1).Spec(wrappers.MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).Autoscaling().Obj()).Obj(), SkipReasonAutoscaling},
	} {
		if got := SkipReason(c.cluster); got != c.want {
			t.Errorf("%s: SkipReason = %q, want %q", name, got, c.want)
		}
	}
}

// TestBuildObjects: KubeRay's Workload and PodGroup of a cluster: named
// <cluster> and <cluster>-cluster, labeled ray.io/cluster, controlled by the
// cluster, one template "cluster", minCount the head plus every desired
// worker Pod (replicas times hosts, suspended groups none).
func TestBuildObjects(t *testing.T) {
	spec := wrappers.MakeRayClusterSpec().WorkerGroup("small", 3, 0, 5).WorkerGroup("multi", 2, 0, 2).Hosts("multi", 4).
		WorkerGroup("off", 7, 0, 7).SuspendGroup("off").Obj()
	cluster := gangCluster(0).Spec(spec).Obj()
	const minCount = 1 + 3 + 2*4
	meta := metav1.ObjectMeta{
		Namespace: "ns", Labels: map[string]string{rayv1.LabelCluster: "rc"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "rc", UID: "rc-uid", Controller: new(true), BlockOwnerDeletion: new(true),
		}},
	}
	gang := scheduling.PodGroupSchedulingPolicy{Gang: &scheduling.GangSchedulingPolicy{MinCount: minCount}}
	wantWorkload := &scheduling.Workload{ObjectMeta: *meta.DeepCopy(), Spec: scheduling.WorkloadSpec{
		ControllerRef:     &scheduling.TypedLocalObjectReference{APIGroup: "ray.io", Kind: "RayCluster", Name: "rc"},
		PodGroupTemplates: []scheduling.PodGroupTemplate{{Name: "cluster", SchedulingPolicy: gang}},
	}}
	wantWorkload.Name = "rc"
	if diff := cmp.Diff(wantWorkload, BuildWorkload(cluster)); diff != "" {
		t.Errorf("Workload (-want +got):\n%s", diff)
	}
	wantPodGroup := &scheduling.PodGroup{ObjectMeta: *meta.DeepCopy(), Spec: scheduling.PodGroupSpec{
		PodGroupTemplateRef: &scheduling.PodGroupTemplateReference{Workload: &scheduling.WorkloadPodGroupTemplateReference{
			WorkloadName: "rc", PodGroupTemplateName: "cluster",
		}},
		SchedulingPolicy: gang,
	}}
	wantPodGroup.Name = "rc-cluster"
	if diff := cmp.Diff(wantPodGroup, BuildPodGroup(cluster)); diff != "" {
		t.Errorf("PodGroup (-want +got):\n%s", diff)
	}
}

func TestWorkloadStale(t *testing.T) {
	desired := BuildWorkload(gangCluster(2).Obj())
	for name, c := range map[string]struct {
		mutate func(*scheduling.Workload)
		want   bool
	}{
		"same":           {func(*scheduling.Workload) {}, false},
		"other count":    {func(w *scheduling.Workload) { w.Spec.PodGroupTemplates[0].SchedulingPolicy.Gang.MinCount = 9 }, true},
		"basic policy":   {func(w *scheduling.Workload) { w.Spec.PodGroupTemplates[0].SchedulingPolicy.Gang = nil }, true},
		"other template": {func(w *scheduling.Workload) { w.Spec.PodGroupTemplates[0].Name = "workers" }, true},
		"two templates": {func(w *scheduling.Workload) {
			w.Spec.PodGroupTemplates = append(w.Spec.PodGroupTemplates, w.Spec.PodGroupTemplates[0])
		}, true},
		"controllerRef only": {func(w *scheduling.Workload) { w.Spec.ControllerRef = nil }, false},
	} {
		existing := desired.DeepCopy()
		c.mutate(existing)
		if got := workloadStale(existing, desired); got != c.want {
			t.Errorf("%s: stale = %v, want %v", name, got, c.want)
		}
	}
}
