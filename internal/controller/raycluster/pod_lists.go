package raycluster

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
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
func (r *Reconciler) listPods(ctx context.Context, cluster *rayv1.RayCluster, extra map[string]string) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.client.List(ctx, &list, client.InNamespace(cluster.Namespace), podSelector(cluster, extra)); err != nil {
		return nil, fmt.Errorf("listing Pods: %w", err)
	}
	return list.Items, nil
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
	active := 0
	for i := range pods {
		if pods[i].DeletionTimestamp.IsZero() {
			active++
		}
	}
	if active == 0 {
		return pods, false, nil
	}
	if err := r.client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(cluster.Namespace), podSelector(cluster, extra)); err != nil {
		return pods, false, fmt.Errorf("deleting Pods: %w", err)
	}
	return pods, true, nil
}
