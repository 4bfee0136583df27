package raycluster

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/expectations"
)

// podSelector selects the cluster's Pods, narrowed by extra labels.
func podSelector(cluster *rayv1.RayCluster, extra map[string]string) client.MatchingLabels {
	labels := client.MatchingLabels{rayv1.LabelCluster: cluster.Name}
	maps.Copy(labels, extra)
	return labels
}

// Label sets narrowing podSelector.
var (
	headPodLabels   = map[string]string{rayv1.LabelNodeType: string(rayv1.HeadNode)}
	workerPodLabels = map[string]string{rayv1.LabelNodeType: string(rayv1.WorkerNode)}
)

func groupPodLabels(groupName string) map[string]string {
	return map[string]string{rayv1.LabelNodeType: string(rayv1.WorkerNode), rayv1.LabelGroup: groupName}
}

// listPods lists the cluster's Pods carrying extra labels (all its Pods for
// nil).
//
// The Pods are the informer cache's own, not copies: each is a copy of the
// cached Pod's struct whose maps, slices and pointers are the cache's. Copying
// every Pod of every pass was a tenth of the operator's allocations at 10,000
// RayClusters (docs/dev/benchmarks.md). Nothing may change a listed Pod in
// place: DeepCopy it first, and give a write the copy. The integration suites
// run with client-go's cache mutation detector, which fails them when a
// cached object changes.
func (r *Reconciler) listPods(ctx context.Context, cluster *rayv1.RayCluster, extra map[string]string) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(cluster.Namespace),
		client.MatchingFields{clusterindex.Pods: cluster.Name}, client.MatchingLabels(extra), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing Pods: %w", err)
	}
	return list.Items, nil
}

// podSnapshot is the cluster's Pods as listed once in a pass, with the
// result of each group's scale expectations as checked just before.
type podSnapshot struct {
	pods         []corev1.Pod
	expectations map[string]expectations.Check
}

// clusterPods lists the cluster's Pods on its first call in a pass and
// returns the same snapshot afterwards, so a pass lists them once instead
// of once for the head, once per worker group and once for the status.
//
// The expectations of the head and of every worker group are checked
// before the List, not when each group's turn comes: a group found
// satisfied must be one whose last creations and deletions the List shows.
// Were a group checked after the List, an expectation met in between (the
// cache catching up) would let the group act on a List missing its own last
// creation, and create that Pod a second time.
func (r *Reconciler) clusterPods(ctx context.Context, s *scope) (*podSnapshot, error) {
	if s.pods != nil {
		return s.pods, nil
	}
	groups := make([]string, 0, 1+len(s.cluster.Spec.WorkerGroupSpecs))
	groups = append(groups, expectations.HeadGroup)
	for i := range s.cluster.Spec.WorkerGroupSpecs {
		groups = append(groups, s.cluster.Spec.WorkerGroupSpecs[i].GroupName)
	}
	checks := make(map[string]expectations.Check, len(groups))
	for i, c := range r.Expectations.SatisfiedGroups(ctx, s.cluster.Namespace, s.cluster.Name, groups) {
		checks[groups[i]] = c
		s.cacheBehind = s.cacheBehind || c.CreatesUnseen
	}
	pods, err := r.listPods(ctx, s.cluster, nil)
	if err != nil {
		return nil, err
	}
	s.pods = &podSnapshot{pods: pods, expectations: checks}
	return s.pods, nil
}

// matching returns the snapshot's Pods carrying every label of extra, the
// Pods the selector podSelector(cluster, extra) would list. The Pods share
// their maps with the snapshot: a caller that changes one copies it first.
func (p *podSnapshot) matching(extra map[string]string) []corev1.Pod {
	n := 0
	for i := range p.pods {
		if hasLabels(p.pods[i].Labels, extra) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	// Sized once: a Pod is about a kilobyte, and growing the slice by
	// appends was a fortieth of the allocated bytes at 10,000 RayClusters.
	out := make([]corev1.Pod, 0, n)
	for i := range p.pods {
		if hasLabels(p.pods[i].Labels, extra) {
			out = append(out, p.pods[i])
		}
	}
	return out
}

func hasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// podsForStatus are the Pods the status is computed from: the pass's
// snapshot when the pass wrote no Pod, else a new List, so that the status
// shows the Pods the pass created and deleted as far as the cache does.
func (r *Reconciler) podsForStatus(ctx context.Context, s *scope) ([]corev1.Pod, error) {
	if s.pods != nil && !s.podsWritten {
		return s.pods.pods, nil
	}
	return r.listPods(ctx, s.cluster, nil)
}

// deleteAllPods deletes, in one collection call, the cluster's Pods carrying
// extra labels. It returns the Pods it listed (terminating ones included)
// and whether it sent a deletion: nothing is sent when every listed Pod is
// already terminating.
func (r *Reconciler) deleteAllPods(ctx context.Context, cluster *rayv1.RayCluster, extra map[string]string) ([]corev1.Pod, bool, error) {
	pods, err := r.listPods(ctx, cluster, extra)
	if err != nil {
		return nil, false, err
	}
	deleted, err := r.deletePodCollection(ctx, cluster, extra, pods)
	return pods, deleted, err
}

// deleteSnapshotPods is deleteAllPods within a pass: the Pods come from the
// pass's snapshot, and the pass records that it wrote Pods.
func (r *Reconciler) deleteSnapshotPods(ctx context.Context, s *scope, extra map[string]string) (bool, error) {
	snap, err := r.clusterPods(ctx, s)
	if err != nil {
		return false, err
	}
	deleted, err := r.deletePodCollection(ctx, s.cluster, extra, snap.matching(extra))
	if deleted || err != nil {
		s.podsWritten = true
	}
	return deleted, err
}

// deletePodCollection deletes, in one collection call, the cluster's Pods
// carrying extra labels, unless every one of pods (as listed with those
// labels) is already terminating. It reports whether it sent the deletion.
func (r *Reconciler) deletePodCollection(ctx context.Context, cluster *rayv1.RayCluster, extra map[string]string, pods []corev1.Pod) (bool, error) {
	active := 0
	for i := range pods {
		if pods[i].DeletionTimestamp.IsZero() {
			active++
		}
	}
	if active == 0 {
		return false, nil
	}
	if err := r.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(cluster.Namespace), podSelector(cluster, extra)); err != nil {
		return false, fmt.Errorf("deleting Pods: %w", err)
	}
	return true, nil
}
