package raycluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clustersize"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/podstatus"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// reconcileWorkerGroup scales one worker group. Multi-host groups (with the
// RayMultiHostIndexing gate) are handled replica by replica (multihost.go);
// other groups Pod by Pod.
func (r *Reconciler) reconcileWorkerGroup(ctx context.Context, s *scope, index int) error {
	group := &s.cluster.Spec.WorkerGroupSpecs[index]
	if ok, err := r.groupSatisfied(ctx, s, group.GroupName); !ok {
		return err
	}
	if group.Suspend != nil && *group.Suspend {
		return r.suspendWorkerGroup(ctx, s, group.GroupName)
	}
	snap, err := r.clusterPods(ctx, s)
	if err != nil {
		return err
	}
	pods := snap.matching(groupPodLabels(group.GroupName))
	log := ctrl.LoggerFrom(ctx).WithValues("group", group.GroupName)
	ctx = ctrl.LoggerInto(ctx, log)
	if group.NumOfHosts > 1 && r.multiHostIndexing() {
		return r.reconcileMultiHostGroup(ctx, s, index, pods)
	}
	return r.reconcileSingleHostGroup(ctx, s, index, pods)
}

func (r *Reconciler) multiHostIndexing() bool {
	return r.opts.Features.Enabled(features.RayMultiHostIndexing)
}

// reconcileSingleHostGroup: delete unhealthy Pods (and stop, so the next
// pass sees the result), delete the workers the autoscaler named, then
// create or delete Pods until the count matches. A multi-host group without
// the indexing gate lands here too and is counted in Pods.
func (r *Reconciler) reconcileSingleHostGroup(ctx context.Context, s *scope, index int, pods []corev1.Pod) error {
	group := &s.cluster.Spec.WorkerGroupSpecs[index]
	if n, err := r.deleteUnhealthyWorkers(ctx, s, group.GroupName, pods); err != nil || n > 0 {
		if err != nil {
			return err
		}
		return fmt.Errorf("delete %d unhealthy worker Pods", n)
	}
	remaining, err := r.deleteWorkersToDelete(ctx, s, group, pods)
	if err != nil {
		return err
	}
	if rolling, err := r.reconcileRollingUpdate(ctx, s, index, remaining); rolling || err != nil {
		return err
	}
	diff := int(clustersize.TimesHosts(clustersize.DesiredReplicas(group), group)) - len(remaining)
	ctrl.LoggerFrom(ctx).V(1).Info("Scaling worker group", "desired", diff+len(remaining), "current", len(remaining))
	switch {
	case diff > 0:
		return r.createWorkers(ctx, s, index, freeReplicaIndices(pods, s.takeScaleBudget(diff)))
	case diff < 0 && r.mayDeleteFreely(s.cluster):
		return r.deletePods(ctx, s, scaleDownVictims(remaining, s.takeScaleBudget(-diff)), group.GroupName, "scaling down")
	case diff < 0:
		ctrl.LoggerFrom(ctx).Info("Random Pod deletion is disabled for the cluster. The only decision-maker for Pod deletions is Autoscaler.")
	}
	return nil
}

// deleteUnhealthyWorkers deletes the Pods shouldDeletePod gives up on.
func (r *Reconciler) deleteUnhealthyWorkers(ctx context.Context, s *scope, group string, pods []corev1.Pod) (int, error) {
	deleted := 0
	for i := range pods {
		if remove, why := shouldDeletePod(&pods[i], rayv1.WorkerNode); remove {
			if err := r.deletePod(ctx, s, &pods[i], group, workerPodEvents, why); err != nil {
				return deleted, err
			}
			deleted++
		}
	}
	return deleted, nil
}

// deleteWorkersToDelete deletes the group's Pods listed in
// scaleStrategy.workersToDelete, whatever replicas says (the autoscaler
// lowers replicas and names the victims together), and returns the other
// Pods. Names that are not Pods of this group are ignored: they are gone
// already, and a name must not delete another group's Pod.
func (r *Reconciler) deleteWorkersToDelete(ctx context.Context, s *scope, group *rayv1.WorkerGroupSpec, pods []corev1.Pod) ([]corev1.Pod, error) {
	names := group.ScaleStrategy.WorkersToDelete
	if len(names) == 0 {
		return pods, nil
	}
	var remaining, victims []corev1.Pod
	for i := range pods {
		if slices.Contains(names, pods[i].Name) {
			victims = append(victims, pods[i])
		} else {
			remaining = append(remaining, pods[i])
		}
	}
	if err := r.deletePods(ctx, s, victims, group.GroupName, "listed in scaleStrategy.workersToDelete"); err != nil {
		return nil, err
	}
	s.workersToDeleteDone = append(s.workersToDeleteDone, group.GroupName)
	return remaining, nil
}

// mayDeleteFreely: with the autoscaler on, only it decides which workers go
// (through workersToDelete), unless ENABLE_RANDOM_POD_DELETE says otherwise.
func (r *Reconciler) mayDeleteFreely(cluster *rayv1.RayCluster) bool {
	return !raypod.AutoscalingEnabled(cluster) || r.opts.RandomPodDelete
}

// createWorkers creates one worker Pod per replica index (createPods
// batches them).
func (r *Reconciler) createWorkers(ctx context.Context, s *scope, index int, replicaIndices []int) error {
	group := s.cluster.Spec.WorkerGroupSpecs[index].GroupName
	pods := make([]*corev1.Pod, 0, len(replicaIndices))
	for _, ri := range replicaIndices {
		pod, err := raypod.BuildWorkerPod(s.cluster, index, raypod.WorkerIndex{ReplicaIndex: ri}, r.opts.Pod)
		if err == nil {
			err = stampWorkerPod(s.cluster, index, pod)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", errFailedCreateWorkerPod, err)
		}
		pods = append(pods, pod)
	}
	return r.createPods(ctx, s, pods, group, workerPodEvents)
}

// freeReplicaIndices returns the n lowest replica indices no Pod uses, so a
// group's indices stay dense as Pods come and go.
func freeReplicaIndices(pods []corev1.Pod, n int) []int {
	used := map[int]bool{}
	for i := range pods {
		if v, err := strconv.Atoi(pods[i].Labels[rayv1.LabelWorkerReplicaIndex]); err == nil {
			used[v] = true
		}
	}
	free := make([]int, 0, n)
	for i := 0; len(free) < n; i++ {
		if !used[i] {
			free = append(free, i)
		}
	}
	return free
}

// scaleDownVictims picks n Pods to delete when scaling down: those doing
// the least work first (not running or not ready), then the youngest, so
// that long-running workers survive. KubeRay takes the first n listed.
func scaleDownVictims(pods []corev1.Pod, n int) []corev1.Pod {
	sorted := podstatus.LeastWorkFirst(pods)
	return sorted[:min(n, len(sorted))]
}
