// Package clustersize computes how many Pods a RayCluster should have and
// what they request, the way KubeRay counts them: per worker group, replicas
// clamped to [minReplicas, maxReplicas] (none while the group is
// suspended), each replica numOfHosts Pods, plus the head. The RayCluster
// controller sizes its worker groups and its status with it, and the batch
// scheduler plugins size their gangs (PodGroup minMember and minResources,
// YuniKorn task groups) with it.
package clustersize

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// DesiredReplicas is the number of replicas a worker group should have:
// replicas clamped to [minReplicas, maxReplicas] (an unset replicas means
// minReplicas), and none while the group is suspended. A replica is
// numOfHosts Pods.
func DesiredReplicas(group *rayv1.WorkerGroupSpec) int32 {
	if Suspended(group) {
		return 0
	}
	lo, hi := MinReplicas(group), MaxReplicas(group)
	switch {
	case lo > hi:
		return hi
	case group.Replicas == nil || *group.Replicas < lo:
		return lo
	case *group.Replicas > hi:
		return hi
	default:
		return *group.Replicas
	}
}

// Suspended reports whether the worker group is suspended.
func Suspended(group *rayv1.WorkerGroupSpec) bool {
	return group.Suspend != nil && *group.Suspend
}

// MinReplicas is minReplicas, 0 when unset.
func MinReplicas(group *rayv1.WorkerGroupSpec) int32 {
	if group.MinReplicas == nil {
		return 0
	}
	return *group.MinReplicas
}

// MaxReplicas is maxReplicas, MaxInt32 when unset.
func MaxReplicas(group *rayv1.WorkerGroupSpec) int32 {
	if group.MaxReplicas == nil {
		return math.MaxInt32
	}
	return *group.MaxReplicas
}

// HostsPerReplica is numOfHosts, at least 1 (a CRD installed before the
// field existed leaves it 0).
func HostsPerReplica(group *rayv1.WorkerGroupSpec) int32 {
	return max(group.NumOfHosts, 1)
}

// TimesHosts multiplies a replica count by the hosts per replica without
// overflowing int32 (maxReplicas defaults to MaxInt32).
func TimesHosts(replicas int32, group *rayv1.WorkerGroupSpec) int32 {
	return int32(min(int64(replicas)*int64(HostsPerReplica(group)), math.MaxInt32))
}

// DesiredWorkerPods is the number of worker Pods of every worker group at
// its desired replicas (suspended groups have none).
func DesiredWorkerPods(spec *rayv1.RayClusterSpec) int32 {
	return sumWorkers(spec, DesiredReplicas)
}

// MinWorkerPods is the number of worker Pods of every worker group that is
// not suspended at its minReplicas: the floor an autoscaled cluster keeps.
func MinWorkerPods(spec *rayv1.RayClusterSpec) int32 {
	return sumWorkers(spec, func(g *rayv1.WorkerGroupSpec) int32 {
		if Suspended(g) {
			return 0
		}
		return MinReplicas(g)
	})
}

func sumWorkers(spec *rayv1.RayClusterSpec, replicas func(*rayv1.WorkerGroupSpec) int32) int32 {
	var total int64
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		total += int64(TimesHosts(replicas(g), g))
	}
	return int32(min(total, math.MaxInt32))
}

// DesiredResources sums what the head and every desired worker Pod request.
func DesiredResources(spec *rayv1.RayClusterSpec) corev1.ResourceList {
	return sumResources(spec, DesiredReplicas)
}

// MinResources sums what the head and the minReplicas worker Pods of every
// group that is not suspended request.
func MinResources(spec *rayv1.RayClusterSpec) corev1.ResourceList {
	return sumResources(spec, func(g *rayv1.WorkerGroupSpec) int32 {
		if Suspended(g) {
			return 0
		}
		return MinReplicas(g)
	})
}

func sumResources(spec *rayv1.RayClusterSpec, replicas func(*rayv1.WorkerGroupSpec) int32) corev1.ResourceList {
	total := PodResources(&spec.HeadGroupSpec.Template.Spec)
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		AddTimes(total, PodResources(&g.Template.Spec), int64(TimesHosts(replicas(g), g)))
	}
	return total
}

// PodResources sums the containers' requests, taking the limit where a
// request is missing (as the API server defaults it). Init containers and
// Pod overhead are not counted, as in KubeRay.
func PodResources(spec *corev1.PodSpec) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range spec.Containers {
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				Add(sum, name, q)
			}
		}
		for name, q := range c.Resources.Requests {
			Add(sum, name, q)
		}
	}
	return sum
}

// Sum adds resource lists up into a new list.
func Sum(lists ...corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, l := range lists {
		AddTimes(total, l, 1)
	}
	return total
}

// AddTimes adds times copies of list to total; zero copies add nothing,
// not even zero quantities.
func AddTimes(total, list corev1.ResourceList, times int64) {
	if times <= 0 {
		return
	}
	for name, q := range list {
		scaled := q.DeepCopy()
		scaled.Mul(times)
		Add(total, name, scaled)
	}
}

// Add adds q to the quantity of name in list.
func Add(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	sum := list[name]
	sum.Add(q)
	list[name] = sum
}
