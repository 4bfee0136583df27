package incrementalupgrade

import (
	"time"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Defaults of the status fields while they are unset: the active cluster
// has all traffic and capacity, the pending one none.
const (
	full  int32 = 100
	empty int32 = 0
)

// Upgrade is the state of an incremental upgrade that the steps read: the
// active and pending parts of the RayService's status and whether traffic
// is rolling back to the active cluster.
type Upgrade struct {
	Active, Pending *rayv1.RayServiceStatus
	Rollback        bool
}

func (u Upgrade) activeTC() int32  { return ptr.Deref(u.Active.TargetCapacity, full) }
func (u Upgrade) pendingTC() int32 { return ptr.Deref(u.Pending.TargetCapacity, empty) }
func (u Upgrade) activeTR() int32  { return ptr.Deref(u.Active.TrafficRoutedPercent, full) }
func (u Upgrade) pendingTR() int32 { return ptr.Deref(u.Pending.TrafficRoutedPercent, empty) }

// Weights are the HTTPRoute weights of the active and pending clusters.
type Weights struct{ Active, Pending int32 }

// NextWeights returns the weights the HTTPRoute should carry at now, and
// how long until the next step may move them (0: no step is waiting).
// Traffic moves by stepSizePercent at most every interval towards the
// target_capacity of the cluster gaining it: the pending cluster, once all
// its applications run; the active one during a rollback, healthy pending
// cluster or not.
func NextWeights(u Upgrade, opts Options, pendingReady bool, now time.Time) (Weights, time.Duration) {
	w := Weights{Active: u.activeTR(), Pending: u.pendingTR()}
	gaining, target, current := u.Pending, u.pendingTC(), w.Pending
	if u.Rollback {
		gaining, target, current = u.Active, u.activeTC(), w.Active
	} else if !pendingReady {
		return w, 0
	}
	if current == target {
		return w, 0
	}
	if wait := intervalLeft(gaining, opts.Interval, now); wait > 0 {
		return w, wait
	}
	moved := min(full, current+opts.StepSizePercent, target)
	if u.Rollback {
		return Weights{Active: moved, Pending: full - moved}, opts.Interval
	}
	return Weights{Active: full - moved, Pending: moved}, opts.Interval
}

// intervalLeft is how much of an interval since a cluster's traffic last
// moved is still to run at now (0: none, or its traffic never moved).
func intervalLeft(st *rayv1.RayServiceStatus, interval time.Duration, now time.Time) time.Duration {
	if st.LastTrafficMigratedTime == nil {
		return 0
	}
	return max(0, st.LastTrafficMigratedTime.Add(interval).Sub(now))
}

// Done reports whether the upgrade reached its end: all capacity moved to
// the pending cluster, or during a rollback back to the active one.
func (u Upgrade) Done() bool {
	if u.Rollback {
		return u.activeTC() == full && u.pendingTC() == empty
	}
	return u.activeTC() == empty && u.pendingTC() == full
}

// NextTargetCapacity returns the target_capacity to give the active
// cluster (forActive) or the pending one at now, and false when it keeps
// its own. Capacity moves by maxSurgePercent, and only once traffic caught
// up with the capacity of the cluster gaining it: first the gaining cluster
// grows while the two sum to at most 100, then the other one shrinks.
//
// A shrink also waits until the last traffic step is an interval old (the
// returned duration is what is left of it). A gateway applies a route some
// time after it is written, and Serve holds the requests that still reach
// a cluster whose capacity went to 0 until they time out: the cluster must
// lose its traffic before it loses its replicas.
func NextTargetCapacity(u Upgrade, opts Options, forActive bool, now time.Time) (int32, time.Duration, bool) {
	a, p := u.activeTC(), u.pendingTC()
	overCommitted := a+p > full
	gaining, caughtUp, shrinking := u.Pending, p == u.pendingTR(), forActive
	if u.Rollback {
		gaining, caughtUp, shrinking = u.Active, a == u.activeTR(), !forActive
	}
	switch {
	case !caughtUp || overCommitted != shrinking:
		return 0, 0, false
	case !shrinking:
		return min(full, ownTC(u, forActive)+opts.MaxSurgePercent), 0, true
	}
	if wait := intervalLeft(gaining, opts.Interval, now); wait > 0 {
		return 0, wait, false
	}
	return max(empty, ownTC(u, forActive)-opts.MaxSurgePercent), 0, true
}

// ownTC is the target_capacity of the active cluster (forActive) or the
// pending one.
func ownTC(u Upgrade, forActive bool) int32 {
	if forActive {
		return u.activeTC()
	}
	return u.pendingTC()
}

// PromotionDue reports whether the pending cluster has taken over: it has
// all the traffic and the active cluster no capacity left.
func PromotionDue(u Upgrade) bool {
	return !u.Rollback && u.Active.TargetCapacity != nil && *u.Active.TargetCapacity == empty &&
		u.Pending.TrafficRoutedPercent != nil && *u.Pending.TrafficRoutedPercent == full
}

// RollbackComplete reports whether a rollback finished: the active cluster
// has all capacity and traffic back, and the pending cluster none (or its
// head is not even ready, so it serves nothing).
func RollbackComplete(u Upgrade, pendingHeadReady bool) bool {
	if !u.Rollback || u.activeTC() != full || u.activeTR() != full {
		return false
	}
	return !pendingHeadReady || (u.pendingTC() == empty && u.pendingTR() == empty)
}

// InitialPendingCapacity is the target_capacity of a new pending cluster:
// all of it when there is no active cluster (the first cluster of a
// RayService), none when it will take over from an active one.
func InitialPendingCapacity(hasActive bool) int32 {
	if hasActive {
		return empty
	}
	return full
}

// Direction is what a change of the spec during an incremental upgrade
// means for it.
type Direction int

const (
	// Forward: the spec is the pending cluster's; the upgrade goes on.
	Forward Direction = iota
	// RollBack: the spec returned to the active cluster's.
	RollBack
	// RollBackThenUpgrade: the spec is a third one; traffic goes back to
	// the active cluster, and a new upgrade starts from there.
	RollBackThenUpgrade
)

// DirectionOf decides the direction of an upgrade from whether the spec
// equals the active and the pending clusters' specs.
func DirectionOf(matchesActive, matchesPending bool) Direction {
	switch {
	case matchesActive:
		return RollBack
	case matchesPending:
		return Forward
	default:
		return RollBackThenUpgrade
	}
}
