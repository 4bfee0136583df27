package rayservice

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// reconcileClusters loads the active and pending clusters named in status,
// creates the pending one when it does not exist yet, and updates a cluster
// in place when that is enough: worker groups were only appended to the
// spec, or the cluster was made by another operator version (an operator
// upgrade or a handover from KubeRay must not start an upgrade).
func (r *Reconciler) reconcileClusters(ctx context.Context, s *scope) (passsteps.Result, error) {
	var res passsteps.Result
	var err error
	if s.active, err = r.getCluster(ctx, s, s.activeName()); err != nil {
		return res, err
	}
	if s.pending, err = r.getCluster(ctx, s, s.pendingName()); err != nil {
		return res, err
	}
	if s.pendingName() != "" && s.pending == nil {
		if s.pending, err = r.createCluster(ctx, s, s.pendingName()); err != nil {
			return res, err
		}
		res = passsteps.Requeue(r.opts.InFlightRequeue)
	}
	if s.active != nil && !conditions.IsTrue(s.rs.Status.Conditions, rayv1.UpgradeInProgress) && r.canUpdateInPlace(s.rs, s.active, true) {
		if s.active, err = r.updateCluster(ctx, s, s.active); err != nil {
			return res, err
		}
	}
	if s.pending != nil && r.canUpdateInPlace(s.rs, s.pending, false) {
		if s.pending, err = r.updateCluster(ctx, s, s.pending); err != nil {
			return res, err
		}
	}
	if s.servingCluster, err = r.servingCluster(ctx, s.rs); err != nil {
		return res, err
	}
	r.detectRollback(s)
	res = res.Merge(passsteps.Requeue(r.reconcileUpgradeDeadline(s)))
	s.prepareNew = r.shouldPrepareNewCluster(s)
	return res, nil
}

// getCluster returns the named cluster of the RayService, nil for "" or a
// cluster that does not exist.
func (r *Reconciler) getCluster(ctx context.Context, s *scope, name string) (*rayv1.RayCluster, error) {
	if name == "" {
		return nil, nil
	}
	return r.clusters.Get(ctx, types.NamespacedName{Namespace: s.rs.Namespace, Name: name})
}

// createCluster creates the cluster named name from the RayService's spec.
func (r *Reconciler) createCluster(ctx context.Context, s *scope, name string) (*rayv1.RayCluster, error) {
	cluster, err := r.desiredCluster(s, name)
	if err != nil {
		return nil, err
	}
	return cluster, r.clusters.Create(ctx, s.rs, cluster)
}

// desiredCluster is the cluster the RayService asks for now: its spec, its
// labels and annotations, the spec hash, the number of worker groups and
// the operator version. During an incremental upgrade a new cluster starts
// from minReplicas (the autoscaler grows it), not from replicas.
func (r *Reconciler) desiredCluster(s *scope, name string) (*rayv1.RayCluster, error) {
	cluster := clusterowner.Build(s.rs, rayv1.KindRayService, name, &s.rs.Spec.RayClusterSpec)
	if err := clusterowner.Annotate(cluster); err != nil {
		return nil, err
	}
	if cluster.Annotations == nil {
		cluster.Annotations = map[string]string{}
	}
	cluster.Annotations[rayv1.LabelKubeRayVersion] = r.opts.OperatorVersion
	if r.incrementalEnabled(s.rs) && name == s.pendingName() && s.activeName() != "" {
		for i := range cluster.Spec.WorkerGroupSpecs {
			cluster.Spec.WorkerGroupSpecs[i].Replicas = nil
		}
	}
	return cluster, nil
}

// canUpdateInPlace reports whether a cluster takes the current spec in
// place: only worker groups were appended, or (for the active cluster) it
// was made by another operator version.
func (r *Reconciler) canUpdateInPlace(rs *rayv1.RayService, cluster *rayv1.RayCluster, active bool) bool {
	if active && cluster.Annotations[rayv1.LabelKubeRayVersion] != r.opts.OperatorVersion {
		return true
	}
	match, err := clusterowner.Compare(cluster, &rs.Spec.RayClusterSpec)
	return err == nil && match == clusterowner.SpecAppended
}

// updateCluster gives a cluster the RayService's current spec, labels and
// annotations. It keeps what belongs to others: spec.suspend (Kueue's once
// the cluster exists), the replicas of existing worker groups when the
// autoscaler owns them, and the operator's own annotations on the cluster.
func (r *Reconciler) updateCluster(ctx context.Context, s *scope, current *rayv1.RayCluster) (*rayv1.RayCluster, error) {
	desired, err := r.desiredCluster(s, current.Name)
	if err != nil {
		return nil, err
	}
	updated := current.DeepCopy()
	updated.Spec = desired.Spec
	updated.Spec.Suspend = current.Spec.Suspend
	if ptrTrue(current.Spec.EnableInTreeAutoscaling) {
		keepReplicas(&updated.Spec, &current.Spec)
	}
	updated.Labels = desired.Labels
	annotations := desired.Annotations
	for _, key := range []string{rayv1.AnnotationAppliedServeConfig, rayv1.AnnotationDeletionDeadline} {
		if v, ok := current.Annotations[key]; ok {
			annotations[key] = v
		}
	}
	updated.Annotations = annotations
	ctrl.LoggerFrom(ctx).Info("Updating RayCluster in place", "rayCluster", current.Name)
	if err := r.clusters.Update(ctx, s.rs, updated); err != nil {
		return nil, err
	}
	return updated, nil
}

// keepReplicas copies the replicas of worker groups that exist in both
// specs from current to updated.
func keepReplicas(updated, current *rayv1.RayClusterSpec) {
	replicas := map[string]*int32{}
	for _, g := range current.WorkerGroupSpecs {
		replicas[g.GroupName] = g.Replicas
	}
	for i := range updated.WorkerGroupSpecs {
		if r, ok := replicas[updated.WorkerGroupSpecs[i].GroupName]; ok {
			updated.WorkerGroupSpecs[i].Replicas = r
		}
	}
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// shouldPrepareNewCluster reports whether the spec asks for a new pending
// cluster: there is no cluster at all, or the spec differs from the
// pending cluster's (or the active one's when there is no pending) and
// upgrades make new clusters. Never while the Services already serve the
// pending cluster or a rollback is in progress, nor while an abandoned
// spec waits for its retry (see upgradedeadline.go).
func (r *Reconciler) shouldPrepareNewCluster(s *scope) bool {
	if s.pendingName() != "" && s.servingCluster == s.pendingName() {
		return false
	}
	if conditions.IsTrue(s.rs.Status.Conditions, rayv1.RollbackInProgress) {
		return false
	}
	current := s.pending
	if current == nil && s.pendingName() == "" {
		current = s.active
	}
	switch {
	case s.activeName() == "" && s.pendingName() == "":
		return true
	case current == nil:
		// The cluster named in status is gone; only a missing active
		// cluster without a pending one is replaced.
		return s.pendingName() == ""
	}
	match, err := clusterowner.Compare(current, &s.rs.Spec.RayClusterSpec)
	if err != nil || match != clusterowner.SpecDifferent || r.retryHeldBack(s) {
		return false
	}
	return r.newClusterOnChange(s.rs)
}

// newClusterOnChange reports whether a changed cluster spec gives a new
// cluster: spec.upgradeStrategy.type decides when set (NewCluster always;
// NewClusterWithIncrementalUpgrade with the RayServiceIncrementalUpgrade
// gate; None never), else ENABLE_ZERO_DOWNTIME.
func (r *Reconciler) newClusterOnChange(rs *rayv1.RayService) bool {
	if s := rs.Spec.UpgradeStrategy; s != nil && s.Type != nil {
		switch *s.Type {
		case rayv1.RayServiceNewCluster:
			return true
		case rayv1.RayServiceNewClusterWithIncrementalUpgrade:
			return r.opts.Features.Enabled(features.RayServiceIncrementalUpgrade)
		default:
			return false
		}
	}
	return r.opts.ZeroDowntime
}
