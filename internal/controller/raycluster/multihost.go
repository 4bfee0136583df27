package raycluster

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clustersize"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/podstatus"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// replicaNameSuffixLength is the length of the random suffix of a replica
// name, as in KubeRay.
const replicaNameSuffixLength = 5

// replica is one replica of a multi-host group: numOfHosts Pods that share
// a ray.io/worker-group-replica-name and live and die together (a TPU slice
// with a host missing is useless).
type replica struct {
	name  string
	index int
	pods  []corev1.Pod
}

// groupReplicas groups Pods by replica name, sorted by replica index then
// name. Pods without a replica name form one replica named "".
func groupReplicas(pods []corev1.Pod) []replica {
	byName := map[string]*replica{}
	for _, pod := range pods {
		name := pod.Labels[rayv1.LabelWorkerReplicaName]
		rep, ok := byName[name]
		if !ok {
			index, err := strconv.Atoi(pod.Labels[rayv1.LabelWorkerReplicaIndex])
			if err != nil {
				index = -1
			}
			rep = &replica{name: name, index: index}
			byName[name] = rep
		}
		rep.pods = append(rep.pods, pod)
	}
	out := make([]replica, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	slices.SortStableFunc(out, func(a, b replica) int { return cmp.Compare(a.index, b.index) })
	return out
}

// reconcileMultiHostGroup scales a multi-host group in whole replicas:
// incomplete replicas and replicas with an unhealthy host are deleted whole
// (and the pass stops there), a host named in workersToDelete takes its
// whole replica with it, and replicas are created or deleted until their
// number matches.
func (r *Reconciler) reconcileMultiHostGroup(ctx context.Context, s *scope, index int, pods []corev1.Pod) error {
	group := &s.cluster.Spec.WorkerGroupSpecs[index]
	replicas := groupReplicas(pods)
	if n, err := r.deleteBrokenReplicas(ctx, s, group, replicas); err != nil || n > 0 {
		if err != nil {
			return err
		}
		return fmt.Errorf("deleted %d incomplete or unhealthy replicas of multi-host worker group %s", n, group.GroupName)
	}
	replicas, err := r.deleteReplicasToDelete(ctx, s, group, replicas)
	if err != nil {
		return err
	}
	diff := int(clustersize.DesiredReplicas(group)) - len(replicas)
	ctrl.LoggerFrom(ctx).V(1).Info("Scaling multi-host worker group", "desiredReplicas", diff+len(replicas), "replicas", len(replicas))
	switch {
	case diff > 0:
		for _, ri := range freeReplicaIndices(pods, diff) {
			if err := r.createReplica(ctx, s, index, ri); err != nil {
				return err
			}
		}
	case diff < 0 && r.mayDeleteFreely(s.cluster):
		for _, rep := range replicaVictims(replicas, -diff) {
			if err := r.deletePods(ctx, s, rep.pods, group.GroupName, "scaling down"); err != nil {
				return err
			}
		}
	case diff < 0:
		ctrl.LoggerFrom(ctx).Info("Random Pod deletion is disabled for the cluster. The only decision-maker for Pod deletions is Autoscaler.")
	}
	return nil
}

// deleteBrokenReplicas deletes replicas that miss a host or have a host
// that cannot run any more.
func (r *Reconciler) deleteBrokenReplicas(ctx context.Context, s *scope, group *rayv1.WorkerGroupSpec, replicas []replica) (int, error) {
	deleted := 0
	for _, rep := range replicas {
		why := ""
		if len(rep.pods) != int(clustersize.HostsPerReplica(group)) {
			why = fmt.Sprintf("replica %q of multi-host group %s has %d of %d hosts", rep.name, group.GroupName, len(rep.pods), clustersize.HostsPerReplica(group))
		}
		for i := range rep.pods {
			if remove, reason := shouldDeletePod(&rep.pods[i], rayv1.WorkerNode); remove && why == "" {
				why = reason
			}
		}
		if why == "" {
			continue
		}
		if err := r.deletePods(ctx, s, rep.pods, group.GroupName, why); err != nil {
			return deleted, err
		}
		deleted++
	}
	return deleted, nil
}

// deleteReplicasToDelete deletes every replica with a host listed in
// workersToDelete and returns the others.
func (r *Reconciler) deleteReplicasToDelete(ctx context.Context, s *scope, group *rayv1.WorkerGroupSpec, replicas []replica) ([]replica, error) {
	names := group.ScaleStrategy.WorkersToDelete
	if len(names) == 0 {
		return replicas, nil
	}
	var remaining []replica
	for _, rep := range replicas {
		listed := slices.ContainsFunc(rep.pods, func(p corev1.Pod) bool { return slices.Contains(names, p.Name) })
		if !listed {
			remaining = append(remaining, rep)
			continue
		}
		if err := r.deletePods(ctx, s, rep.pods, group.GroupName, "a host is listed in scaleStrategy.workersToDelete"); err != nil {
			return nil, err
		}
	}
	s.workersToDeleteDone = append(s.workersToDeleteDone, group.GroupName)
	return remaining, nil
}

// createReplica creates the numOfHosts Pods of a new replica.
func (r *Reconciler) createReplica(ctx context.Context, s *scope, groupIndex, replicaIndex int) error {
	group := &s.cluster.Spec.WorkerGroupSpecs[groupIndex]
	name := naming.WorkerReplicaName(group.GroupName, utilrand.String(replicaNameSuffixLength))
	for host := range int(clustersize.HostsPerReplica(group)) {
		pod, err := raypod.BuildWorkerPod(s.cluster, groupIndex, raypod.WorkerIndex{ReplicaIndex: replicaIndex, ReplicaName: name, HostIndex: host}, r.opts.Pod)
		if err != nil {
			return fmt.Errorf("%w: %w", errFailedCreateWorkerPod, err)
		}
		if err := r.createPod(ctx, s, pod, group.GroupName, workerPodEvents); err != nil {
			return err
		}
	}
	return nil
}

// replicaVictims picks n replicas to delete: not fully ready ones first,
// then those with the highest index, keeping indices dense.
func replicaVictims(replicas []replica, n int) []replica {
	ready := func(rep replica) bool {
		return !slices.ContainsFunc(rep.pods, func(p corev1.Pod) bool { return !podstatus.RunningAndReady(&p) })
	}
	sorted := slices.Clone(replicas)
	slices.SortStableFunc(sorted, func(a, b replica) int {
		if ra, rb := ready(a), ready(b); ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		return cmp.Compare(b.index, a.index)
	})
	return sorted[:min(n, len(sorted))]
}
