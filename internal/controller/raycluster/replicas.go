package raycluster

import (
	"math"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// desiredReplicas is the number of replicas a worker group should have:
// replicas clamped to [minReplicas, maxReplicas] (an unset replicas means
// minReplicas), and none while the group is suspended. A replica is
// numOfHosts Pods.
func desiredReplicas(group *rayv1.WorkerGroupSpec) int32 {
	if group.Suspend != nil && *group.Suspend {
		return 0
	}
	lo, hi := minReplicas(group), maxReplicas(group)
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

func minReplicas(group *rayv1.WorkerGroupSpec) int32 {
	if group.MinReplicas == nil {
		return 0
	}
	return *group.MinReplicas
}

func maxReplicas(group *rayv1.WorkerGroupSpec) int32 {
	if group.MaxReplicas == nil {
		return math.MaxInt32
	}
	return *group.MaxReplicas
}

// hostsPerReplica is numOfHosts, at least 1 (a CRD installed before the
// field existed leaves it 0).
func hostsPerReplica(group *rayv1.WorkerGroupSpec) int32 {
	return max(group.NumOfHosts, 1)
}

// timesHosts multiplies a replica count by the hosts per replica without
// overflowing int32 (maxReplicas defaults to MaxInt32).
func timesHosts(replicas int32, group *rayv1.WorkerGroupSpec) int32 {
	return int32(min(int64(replicas)*int64(hostsPerReplica(group)), math.MaxInt32))
}
