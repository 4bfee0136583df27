package kuberneteswas

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
	"github.com/ray-operator/ray-operator/internal/clustersize"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// TemplateName is the name of the Workload's one PodGroup template, which
// gang-schedules the whole cluster (head and every worker group).
const TemplateName = "cluster"

// KubeRay's reasons for leaving a RayCluster to the default scheduler alone.
const (
	SkipReasonGangSchedulingDisabled = "gang scheduling not enabled on RayCluster"
	SkipReasonAutoscaling            = "autoscaling is not yet supported"
)

// SkipReason says why cluster gets no Workload and PodGroup, "" when it
// does: it must be labeled ray.io/gang-scheduling-enabled=true (any case)
// and not autoscale.
func SkipReason(cluster *rayv1.RayCluster) string {
	if !strings.EqualFold(cluster.Labels[batchscheduler.LabelGangSchedulingEnabled], "true") {
		return SkipReasonGangSchedulingDisabled
	}
	if raypod.AutoscalingEnabled(cluster) {
		return SkipReasonAutoscaling
	}
	return ""
}

// PodGroupName is the name of the PodGroup of the RayCluster clusterName.
func PodGroupName(clusterName string) string { return clusterName + "-" + TemplateName }

// MinCount is the gang's size: the head and every desired worker Pod.
func MinCount(cluster *rayv1.RayCluster) int32 {
	return 1 + clustersize.DesiredWorkerPods(&cluster.Spec)
}

func gangPolicy(cluster *rayv1.RayCluster) scheduling.PodGroupSchedulingPolicy {
	return scheduling.PodGroupSchedulingPolicy{Gang: &scheduling.GangSchedulingPolicy{MinCount: MinCount(cluster)}}
}

// objectMeta is the metadata of the cluster's Workload and PodGroup:
// labeled with the cluster and controlled by it.
func objectMeta(cluster *rayv1.RayCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       cluster.Namespace,
		Labels:          map[string]string{rayv1.LabelCluster: cluster.Name},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cluster, rayv1.GroupVersion.WithKind(rayv1.KindRayCluster))},
	}
}

// BuildWorkload is the cluster's Workload: named as the cluster, pointing
// back at it (spec.controllerRef), with the one gang template.
func BuildWorkload(cluster *rayv1.RayCluster) *scheduling.Workload {
	return &scheduling.Workload{
		ObjectMeta: objectMeta(cluster, cluster.Name),
		Spec: scheduling.WorkloadSpec{
			ControllerRef: &scheduling.TypedLocalObjectReference{
				APIGroup: rayv1.GroupVersion.Group, Kind: rayv1.KindRayCluster, Name: cluster.Name,
			},
			PodGroupTemplates: []scheduling.PodGroupTemplate{{Name: TemplateName, SchedulingPolicy: gangPolicy(cluster)}},
		},
	}
}

// BuildPodGroup is the cluster's PodGroup, made from the Workload's
// template, with the same gang policy.
func BuildPodGroup(cluster *rayv1.RayCluster) *scheduling.PodGroup {
	return &scheduling.PodGroup{
		ObjectMeta: objectMeta(cluster, PodGroupName(cluster.Name)),
		Spec: scheduling.PodGroupSpec{
			PodGroupTemplateRef: &scheduling.PodGroupTemplateReference{
				Workload: &scheduling.WorkloadPodGroupTemplateReference{WorkloadName: cluster.Name, PodGroupTemplateName: TemplateName},
			},
			SchedulingPolicy: gangPolicy(cluster),
		},
	}
}

// workloadStale reports whether existing must be replaced by desired: its
// one template is not the desired one or gangs another count.
func workloadStale(existing, desired *scheduling.Workload) bool {
	if len(existing.Spec.PodGroupTemplates) != 1 {
		return true
	}
	got, want := existing.Spec.PodGroupTemplates[0], desired.Spec.PodGroupTemplates[0]
	return got.Name != want.Name || !sameGang(got.SchedulingPolicy, want.SchedulingPolicy)
}

// sameGang reports whether got gangs as many Pods as want.
func sameGang(got, want scheduling.PodGroupSchedulingPolicy) bool {
	return got.Gang != nil && got.Gang.MinCount == want.Gang.MinCount
}
