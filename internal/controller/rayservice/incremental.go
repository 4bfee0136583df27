package rayservice

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// Messages of the incremental upgrade's conditions, as KubeRay writes them.
const (
	msgRollingBack      = "Goal state reverted to original cluster, rolling back."
	msgRollingBackThird = "Goal state changed mid-upgrade, rolling back to original cluster."
	msgRollbackComplete = "Rollback complete, active Ray cluster exists and no pending Ray cluster"
)

// incrementalEnabled reports whether rs upgrades with
// NewClusterWithIncrementalUpgrade and the RayServiceIncrementalUpgrade gate
// is on.
func (r *Reconciler) incrementalEnabled(rs *rayv1.RayService) bool {
	return incrementalupgrade.Requested(&rs.Spec) && r.opts.Features.Enabled(features.RayServiceIncrementalUpgrade)
}

// incrementalInProgress reports an incremental upgrade under way.
func (r *Reconciler) incrementalInProgress(s *scope) bool {
	return r.incrementalEnabled(s.rs) && conditions.IsTrue(s.rs.Status.Conditions, rayv1.UpgradeInProgress)
}

// rollingBack reports an incremental upgrade moving traffic back to the
// active cluster.
func rollingBack(s *scope) bool {
	return conditions.IsTrue(s.rs.Status.Conditions, rayv1.RollbackInProgress)
}

// upgradeState is the incremental upgrade as the status describes it.
func upgradeState(s *scope) incrementalupgrade.Upgrade {
	return incrementalupgrade.Upgrade{
		Active: &s.rs.Status.ActiveServiceStatus, Pending: &s.rs.Status.PendingServiceStatus, Rollback: rollingBack(s),
	}
}

// mayApplyConfig reports whether serveConfigV2 may be applied to a cluster
// now. During an incremental upgrade the active cluster keeps the old
// config (unless traffic is rolling back to it), and during a rollback the
// pending cluster gets nothing new.
func (r *Reconciler) mayApplyConfig(s *scope, active bool) bool {
	if !r.incrementalInProgress(s) {
		return true
	}
	if active {
		return rollingBack(s)
	}
	return !rollingBack(s)
}

// targetCapacity is the target_capacity sent with a cluster's config: the
// one in its status (set only by incremental upgrades).
func targetCapacity(s *scope, active bool) *int32 {
	if active {
		return s.rs.Status.ActiveServiceStatus.TargetCapacity
	}
	return s.rs.Status.PendingServiceStatus.TargetCapacity
}

// serveServiceNames are the Services whose endpoints count as serve
// endpoints: the RayService's serve Service, or with incremental upgrades
// the per-cluster serve Services of the active and pending clusters.
func (r *Reconciler) serveServiceNames(s *scope) []string {
	if !r.incrementalEnabled(s.rs) {
		return []string{serveServiceName(s.rs)}
	}
	var names []string
	for _, c := range []string{s.activeName(), s.pendingName()} {
		if c != "" {
			names = append(names, naming.ServeServiceName(c))
		}
	}
	return names
}

// detectRollback follows the spec during an incremental upgrade: back to
// the active cluster's spec, or on to a third one, rolls traffic back to
// the active cluster (RollbackInProgress True); back to the pending
// cluster's spec cancels the rollback. Without an active cluster there is
// nothing to roll back to, which a Warning event says.
func (r *Reconciler) detectRollback(s *scope) {
	if !r.incrementalInProgress(s) {
		return
	}
	if s.active == nil {
		r.events.Eventf(s.rs, nil, corev1.EventTypeWarning, reasonRollbackImpossible, actionReconcile,
			"The active RayCluster %q of the incremental upgrade does not exist, so traffic cannot be rolled back to it", s.activeName())
		return
	}
	if s.pending == nil {
		return
	}
	now := metav1.Time{Time: s.now}
	switch incrementalupgrade.DirectionOf(specIs(s.active, s.rs), specIs(s.pending, s.rs)) {
	case incrementalupgrade.RollBack:
		conditions.MarkTrue(&s.rs.Status.Conditions, rayv1.RollbackInProgress, rayv1.DesiredClusterSpecChanged, msgRollingBack, conditions.At(now, s.rs.Generation))
	case incrementalupgrade.RollBackThenUpgrade:
		conditions.MarkTrue(&s.rs.Status.Conditions, rayv1.RollbackInProgress, rayv1.DesiredClusterSpecChanged, msgRollingBackThird, conditions.At(now, s.rs.Generation))
	default:
		conditions.Remove(&s.rs.Status.Conditions, rayv1.RollbackInProgress)
	}
}

// specIs reports whether a cluster was made from the RayService's current
// cluster spec.
func specIs(c *rayv1.RayCluster, rs *rayv1.RayService) bool {
	match, err := clusterowner.Compare(c, &rs.Spec.RayClusterSpec)
	return err == nil && match == clusterowner.SpecSame
}

// trafficStatus records in status the weight the HTTPRoute gives each
// cluster, and when it last changed.
func (r *Reconciler) trafficStatus(s *scope) {
	if !r.incrementalEnabled(s.rs) || s.route == nil {
		return
	}
	for _, st := range []*rayv1.RayServiceStatus{&s.rs.Status.ActiveServiceStatus, &s.rs.Status.PendingServiceStatus} {
		if st.RayClusterName == "" {
			continue
		}
		w := incrementalupgrade.Weight(s.route, naming.ServeServiceName(st.RayClusterName))
		if w != nil && !ptr.Equal(w, st.TrafficRoutedPercent) {
			st.TrafficRoutedPercent = w
			st.LastTrafficMigratedTime = &metav1.Time{Time: s.now}
		}
	}
}

// incrementalPromotionDue reports whether the pending cluster becomes the
// active one: at once for a RayService's first cluster, else once the
// upgrade moved all traffic to it and all capacity away from the active
// cluster.
func (r *Reconciler) incrementalPromotionDue(s *scope) bool {
	if s.activeName() == "" {
		return true
	}
	return conditions.IsTrue(s.rs.Status.Conditions, rayv1.UpgradeInProgress) && s.pending != nil &&
		incrementalupgrade.PromotionDue(upgradeState(s))
}

// completeRollback ends a rollback once the active cluster has all traffic
// and capacity back: the pending cluster is dropped (and deleted after the
// deletion delay) and the upgrade is over.
func (r *Reconciler) completeRollback(s *scope) {
	if !r.incrementalEnabled(s.rs) || !rollingBack(s) {
		return
	}
	headReady := s.pending != nil && conditions.IsTrue(s.pending.Status.Conditions, rayv1.HeadPodReady)
	if !incrementalupgrade.RollbackComplete(upgradeState(s), headReady) {
		return
	}
	s.rs.Status.PendingServiceStatus = rayv1.RayServiceStatus{}
	s.pending, s.pendingReady = nil, false
	conditions.Remove(&s.rs.Status.Conditions, rayv1.RollbackInProgress)
	s.rollbackCompleted = true
}

// initPendingTraffic sets the starting target_capacity of a new pending
// cluster: all of it for a RayService's first cluster, none when it will
// take over from an active cluster step by step.
func (r *Reconciler) initPendingTraffic(s *scope, pending *rayv1.RayServiceStatus) {
	if !r.incrementalEnabled(s.rs) {
		return
	}
	hasActive := s.activeName() != "" || s.rs.Status.ActiveServiceStatus.TargetCapacity != nil
	pending.TargetCapacity = ptr.To(incrementalupgrade.InitialPendingCapacity(hasActive))
}
