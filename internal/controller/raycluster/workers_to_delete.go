package raycluster

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clearWorkersToDelete empties the scaleStrategy.workersToDelete lists that
// this pass carried out, so that a stale list never deletes a later Pod
// that happens to reuse a name. The patch carries the resourceVersion read
// at the start of the pass: if the autoscaler changed the cluster since
// (possibly naming new victims), the patch fails with a conflict and the
// next pass starts over from the new spec instead of erasing it.
func (r *Reconciler) clearWorkersToDelete(ctx context.Context, s *scope) error {
	if len(s.workersToDeleteDone) == 0 {
		return nil
	}
	cluster := s.cluster.DeepCopy()
	before := cluster.DeepCopy()
	for i := range cluster.Spec.WorkerGroupSpecs {
		group := &cluster.Spec.WorkerGroupSpecs[i]
		if slices.Contains(s.workersToDeleteDone, group.GroupName) {
			group.ScaleStrategy.WorkersToDelete = nil
		}
	}
	if err := r.Client.Patch(ctx, cluster, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("clearing scaleStrategy.workersToDelete: %w", err)
	}
	return nil
}
