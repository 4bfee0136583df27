package rayservice

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/conditions"
)

// maxRetryBackoff caps the doubling back-off between attempts of one spec.
const maxRetryBackoff = time.Hour

// pendingTimeout is spec.upgradeStrategy.pendingClusterTimeoutSeconds, 0
// when unset (no deadline, KubeRay's behaviour).
func pendingTimeout(rs *rayv1.RayService) time.Duration {
	if u := rs.Spec.UpgradeStrategy; u != nil && u.PendingClusterTimeoutSeconds != nil && *u.PendingClusterTimeoutSeconds > 0 {
		return time.Duration(*u.PendingClusterTimeoutSeconds) * time.Second
	}
	return 0
}

// retryBackoff is how long after its abandoned-th consecutive abandonment
// a spec is tried again: pendingClusterRetryBackoffSeconds doubled for each
// abandonment after the first, at most an hour; 0 when unset (no retry).
func retryBackoff(rs *rayv1.RayService, abandoned int32) time.Duration {
	u := rs.Spec.UpgradeStrategy
	if u == nil || u.PendingClusterRetryBackoffSeconds == nil || *u.PendingClusterRetryBackoffSeconds <= 0 {
		return 0
	}
	base := time.Duration(*u.PendingClusterRetryBackoffSeconds) * time.Second
	d := base
	for i := int32(1); i < abandoned && d < maxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, max(maxRetryBackoff, base))
}

// retryWait reports whether a new attempt of the spec with hash specHash
// is held back at now by an earlier abandonment, and for how long (0: until
// the spec changes). A different spec is never held back.
func retryWait(att *rayv1.UpgradeAttempt, specHash string, now time.Time) (bool, time.Duration) {
	if att == nil || att.AbandonedClusterSpecHash == "" || att.AbandonedClusterSpecHash != specHash {
		return false, 0
	}
	if att.NextAttemptTime == nil {
		return true, 0
	}
	if wait := att.NextAttemptTime.Sub(now); wait > 0 {
		return true, wait
	}
	return false, 0
}

// retryHeldBack reports whether shouldPrepareNewCluster must not start a
// new attempt yet: the spec is the one last abandoned and its back-off has
// not passed (or it has none).
func (r *Reconciler) retryHeldBack(s *scope) bool {
	if pendingTimeout(s.rs) == 0 || s.rs.Status.UpgradeAttempt == nil {
		return false
	}
	hash, err := clusterowner.SpecHash(&s.rs.Spec.RayClusterSpec)
	if err != nil {
		return false
	}
	held, _ := retryWait(s.rs.Status.UpgradeAttempt, hash, s.now)
	return held
}

// reconcileUpgradeDeadline times the pending cluster of an upgrade when
// spec.upgradeStrategy.pendingClusterTimeoutSeconds is set, and abandons
// it once it did not take over in time while the active cluster still has
// all the traffic (cleanUpClusters deletes it in the next pass). The
// attempt's start and the abandoned spec live in status.
// It returns how soon to look again (0: no need).
func (r *Reconciler) reconcileUpgradeDeadline(s *scope) time.Duration {
	timeout := pendingTimeout(s.rs)
	if timeout == 0 {
		s.rs.Status.UpgradeAttempt = nil
		conditions.Remove(&s.rs.Status.Conditions, rayv1.UpgradeAbandoned)
		return 0
	}
	att := s.rs.Status.UpgradeAttempt
	if att == nil {
		att = &rayv1.UpgradeAttempt{}
		s.rs.Status.UpgradeAttempt = att
	}
	if s.pendingName() == "" || s.activeName() == "" {
		r.settleUpgradeAttempt(s)
		return r.retryRequeue(s)
	}
	now := metav1.Time{Time: s.now}
	if att.RayClusterName != s.pendingName() {
		att.RayClusterName, att.StartTime = s.pendingName(), &now
		if att.AbandonedClusterSpecHash != "" {
			conditions.MarkFalse(&s.rs.Status.Conditions, rayv1.UpgradeAbandoned, rayv1.UpgradeRetried, fmt.Sprintf("A new upgrade attempt runs with pending RayCluster %s", s.pendingName()), conditions.At(now, s.rs.Generation))
		}
	}
	if !r.abandonable(s) {
		return 0
	}
	if wait := att.StartTime.Add(timeout).Sub(s.now); wait > 0 {
		return wait
	}
	r.abandonUpgrade(s, timeout)
	return r.opts.InFlightRequeue
}

// abandonable reports whether the pending cluster can go without touching
// the traffic: it exists, the Services do not serve it, no rollback runs
// and (incremental upgrade) no traffic or capacity has moved to it.
func (r *Reconciler) abandonable(s *scope) bool {
	if s.pending == nil || !s.pending.DeletionTimestamp.IsZero() || s.servingCluster == s.pendingName() {
		return false
	}
	if conditions.IsTrue(s.rs.Status.Conditions, rayv1.RollbackInProgress) {
		return false
	}
	if !r.incrementalEnabled(s.rs) {
		return true
	}
	st := &s.rs.Status
	return ptr.Deref(st.PendingServiceStatus.TrafficRoutedPercent, 0) == 0 &&
		ptr.Deref(st.PendingServiceStatus.TargetCapacity, 0) == 0 &&
		ptr.Deref(st.ActiveServiceStatus.TargetCapacity, 100) == 100
}

// abandonUpgrade drops the pending cluster from status, records the
// abandoned spec and its next attempt there (ray_operator_service_upgrades_abandoned
// shows the count), and says why with the UpgradeAbandoned condition and a
// Warning event. The cluster itself is deleted by the next pass (see
// abandonedCluster), once this status is written: deleting it now, a pass
// that still read the old status from the cache would recreate it.
func (r *Reconciler) abandonUpgrade(s *scope, timeout time.Duration) {
	name := s.pendingName()
	att := s.rs.Status.UpgradeAttempt
	hash := s.pending.Annotations[rayv1.LabelHashWithoutReplicas]
	if hash == att.AbandonedClusterSpecHash {
		att.Abandoned++
	} else {
		att.Abandoned = 1
	}
	now := metav1.Time{Time: s.now}
	att.AbandonedClusterSpecHash, att.AbandonedRayClusterName, att.AbandonedTime = hash, name, &now
	att.RayClusterName, att.StartTime, att.NextAttemptTime = "", nil, nil
	retry := "a spec change starts a new attempt"
	if b := retryBackoff(s.rs, att.Abandoned); b > 0 {
		att.NextAttemptTime = &metav1.Time{Time: s.now.Add(b)}
		retry = fmt.Sprintf("the same spec is tried again at %s, a spec change starts a new attempt at once",
			att.NextAttemptTime.UTC().Format(time.RFC3339))
	}
	msg := fmt.Sprintf("Pending RayCluster %s did not take over within %s (spec.upgradeStrategy.pendingClusterTimeoutSeconds) and was deleted; RayCluster %s keeps serving; %s",
		name, timeout, s.activeName(), retry)
	conditions.MarkTrue(&s.rs.Status.Conditions, rayv1.UpgradeAbandoned, rayv1.PendingClusterTimeout, msg, conditions.At(now, s.rs.Generation))
	r.events.Eventf(s.rs, nil, corev1.EventTypeWarning, reasonPendingClusterTimeout, actionDelete, "%s", msg)
	s.rs.Status.PendingServiceStatus = rayv1.RayServiceStatus{}
	s.pending, s.pendingReady = nil, false
}

// abandonedCluster reports whether c is the pending cluster of an
// abandoned upgrade, which cleanUpClusters deletes at once (it never
// served, so it gets no deletion delay).
func abandonedCluster(rs *rayv1.RayService, c *rayv1.RayCluster) bool {
	att := rs.Status.UpgradeAttempt
	return att != nil && att.AbandonedRayClusterName != "" && att.AbandonedRayClusterName == c.Name && pendingTimeout(rs) > 0
}

// settleUpgradeAttempt ends the timing of an attempt once no upgrade runs
// (no pending cluster, or no active one to upgrade from), and drops the abandoned spec and its condition once the active
// cluster runs the spec asked for. It runs again after a promotion in the
// same pass (calculateStatus), so that the status written with the new
// active cluster does not still say an attempt runs.
func (r *Reconciler) settleUpgradeAttempt(s *scope) {
	att := s.rs.Status.UpgradeAttempt
	if att == nil || pendingTimeout(s.rs) == 0 || (s.pendingName() != "" && s.activeName() != "") {
		return
	}
	att.RayClusterName, att.StartTime = "", nil
	r.forgetAbandonedUpgrade(s)
}

// forgetAbandonedUpgrade drops the abandoned spec and the condition once
// the active cluster runs the spec asked for (the upgrade went through, or
// the spec went back to the active cluster's).
func (r *Reconciler) forgetAbandonedUpgrade(s *scope) {
	att := s.rs.Status.UpgradeAttempt
	if att.AbandonedClusterSpecHash == "" || s.active == nil {
		return
	}
	if match, err := clusterowner.Compare(s.active, &s.rs.Spec.RayClusterSpec); err != nil || match == clusterowner.SpecDifferent {
		return
	}
	*att = rayv1.UpgradeAttempt{}
	conditions.Remove(&s.rs.Status.Conditions, rayv1.UpgradeAbandoned)
}

// retryRequeue is how soon the held-back spec may be tried again (0: not
// held back, or only a spec change starts a new attempt).
func (r *Reconciler) retryRequeue(s *scope) time.Duration {
	hash, err := clusterowner.SpecHash(&s.rs.Spec.RayClusterSpec)
	if err != nil {
		return 0
	}
	_, wait := retryWait(s.rs.Status.UpgradeAttempt, hash, s.now)
	return wait
}
