package incrementalupgrade

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// side is one cluster's part of the status: target capacity, traffic and
// when traffic last moved (seconds before now; negative: never).
func side(tc, tr *int32, movedAgo int) *rayv1.RayServiceStatus {
	st := &rayv1.RayServiceStatus{TargetCapacity: tc, TrafficRoutedPercent: tr}
	if movedAgo >= 0 {
		st.LastTrafficMigratedTime = &metav1.Time{Time: now.Add(-time.Duration(movedAgo) * time.Second)}
	}
	return st
}

func TestNextWeights(t *testing.T) {
	i := ptr.To[int32]
	opts := Options{MaxSurgePercent: 50, StepSizePercent: 20, Interval: 30 * time.Second}
	for name, tc := range map[string]struct {
		u        Upgrade
		ready    bool
		want     Weights
		wantWait time.Duration
	}{
		"defaults, pending not ready": {Upgrade{Active: side(nil, nil, -1), Pending: side(nil, nil, -1)}, false, Weights{100, 0}, 0},
		"pending not ready pauses":    {Upgrade{Active: side(i(100), i(80), 60), Pending: side(i(50), i(20), 60)}, false, Weights{80, 20}, 0},
		"first step once capacity is there": {
			Upgrade{Active: side(i(100), i(100), -1), Pending: side(i(50), i(0), -1)}, true, Weights{80, 20}, 30 * time.Second,
		},
		"interval not elapsed": {
			Upgrade{Active: side(i(100), i(80), 10), Pending: side(i(50), i(20), 10)}, true, Weights{80, 20}, 20 * time.Second,
		},
		"interval elapsed exactly": {
			Upgrade{Active: side(i(100), i(80), 30), Pending: side(i(50), i(20), 30)}, true, Weights{60, 40}, 30 * time.Second,
		},
		"step capped at the pending capacity": {
			Upgrade{Active: side(i(100), i(60), 40), Pending: side(i(50), i(40), 40)}, true, Weights{50, 50}, 30 * time.Second,
		},
		"traffic at the pending capacity waits for capacity": {
			Upgrade{Active: side(i(100), i(50), 40), Pending: side(i(50), i(50), 40)}, true, Weights{50, 50}, 0,
		},
		"last step to 100": {
			Upgrade{Active: side(i(0), i(10), 40), Pending: side(i(100), i(90), 40)}, true, Weights{0, 100}, 30 * time.Second,
		},
		"rollback moves traffic back even with the pending cluster unhealthy": {
			Upgrade{Active: side(i(100), i(40), 40), Pending: side(i(60), i(60), 0), Rollback: true}, false, Weights{60, 40}, 30 * time.Second,
		},
		"rollback capped at the active capacity": {
			Upgrade{Active: side(i(50), i(40), 40), Pending: side(i(100), i(60), 0), Rollback: true}, false, Weights{50, 50}, 30 * time.Second,
		},
		"rollback waits for its own interval": {
			Upgrade{Active: side(i(100), i(60), 5), Pending: side(i(0), i(40), 100), Rollback: true}, true, Weights{60, 40}, 25 * time.Second,
		},
		"rollback at the active capacity stops": {
			Upgrade{Active: side(i(100), i(100), 40), Pending: side(i(0), i(0), 40), Rollback: true}, true, Weights{100, 0}, 0,
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, wait := NextWeights(tc.u, opts, tc.ready, now)
			if got != tc.want || wait != tc.wantWait {
				t.Errorf("NextWeights = %+v wait %s, want %+v wait %s", got, wait, tc.want, tc.wantWait)
			}
		})
	}
}

func TestNextTargetCapacity(t *testing.T) {
	i := ptr.To[int32]
	type result struct {
		goal int32
		ok   bool
	}
	for name, tc := range map[string]struct {
		u                  Upgrade
		surge              int32
		forActive, forPend result
	}{
		"scale pending up when the sum is below or at 100": {
			Upgrade{Active: side(i(100), i(100), -1), Pending: side(i(0), i(0), -1)}, 30, result{}, result{30, true},
		},
		"scale active down when the sum is above 100": {
			Upgrade{Active: side(i(100), i(70), -1), Pending: side(i(30), i(30), -1)}, 30, result{70, true}, result{},
		},
		"wait while traffic catches up with the pending capacity": {
			Upgrade{Active: side(i(100), i(90), -1), Pending: side(i(30), i(10), -1)}, 30, result{}, result{},
		},
		"pending capacity capped at 100": {
			Upgrade{Active: side(i(20), i(20), -1), Pending: side(i(80), i(80), -1)}, 30, result{}, result{100, true},
		},
		"active capacity floored at 0": {
			Upgrade{Active: side(i(20), i(0), -1), Pending: side(i(100), i(100), -1)}, 30, result{0, true}, result{},
		},
		"rollback: active grows first": {
			Upgrade{Active: side(i(40), i(40), -1), Pending: side(i(60), i(60), -1), Rollback: true}, 30, result{70, true}, result{},
		},
		"rollback: then pending shrinks": {
			Upgrade{Active: side(i(70), i(70), -1), Pending: side(i(60), i(30), -1), Rollback: true}, 30, result{}, result{30, true},
		},
		"rollback: wait while traffic catches up with the active capacity": {
			Upgrade{Active: side(i(70), i(50), -1), Pending: side(i(30), i(50), -1), Rollback: true}, 30, result{}, result{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			opts := Options{MaxSurgePercent: tc.surge, Interval: 30 * time.Second}
			goal, wait, ok := NextTargetCapacity(tc.u, opts, true, now)
			if (result{goal, ok}) != tc.forActive || wait != 0 {
				t.Errorf("active: %d %v wait %v, want %+v", goal, ok, wait, tc.forActive)
			}
			goal, wait, ok = NextTargetCapacity(tc.u, opts, false, now)
			if (result{goal, ok}) != tc.forPend || wait != 0 {
				t.Errorf("pending: %d %v, want %+v", goal, ok, tc.forPend)
			}
		})
	}
}

// TestShrinkWaitsAnIntervalAfterTraffic: a cluster loses capacity only an
// interval after its traffic last moved to the other one; before that the
// step says how long is left. Growing the other cluster does not wait.
func TestShrinkWaitsAnIntervalAfterTraffic(t *testing.T) {
	i := ptr.To[int32]
	opts := Options{MaxSurgePercent: 100, StepSizePercent: 50, Interval: 30 * time.Second}
	type want struct {
		goal int32
		wait time.Duration
		ok   bool
	}
	for name, tc := range map[string]struct {
		u         Upgrade
		forActive bool
		want      want
	}{
		"old cluster, traffic moved 10 s ago": {
			Upgrade{Active: side(i(100), i(0), 10), Pending: side(i(100), i(100), 10)}, true, want{0, 20 * time.Second, false},
		},
		"old cluster, traffic moved 30 s ago": {
			Upgrade{Active: side(i(100), i(0), 30), Pending: side(i(100), i(100), 30)}, true, want{0, 0, true},
		},
		"old cluster, traffic never moved by the operator": {
			Upgrade{Active: side(i(100), i(0), -1), Pending: side(i(100), i(100), -1)}, true, want{0, 0, true},
		},
		"new cluster grows at once": {
			Upgrade{Active: side(i(100), i(100), 0), Pending: side(i(0), i(0), 0)}, false, want{100, 0, true},
		},
		"rollback: new cluster, traffic moved back 29 s ago": {
			Upgrade{Active: side(i(100), i(100), 29), Pending: side(i(100), i(0), 29), Rollback: true}, false, want{0, time.Second, false},
		},
		"rollback: new cluster, traffic moved back 31 s ago": {
			Upgrade{Active: side(i(100), i(100), 31), Pending: side(i(100), i(0), 31), Rollback: true}, false, want{0, 0, true},
		},
	} {
		t.Run(name, func(t *testing.T) {
			goal, wait, ok := NextTargetCapacity(tc.u, opts, tc.forActive, now)
			if got := (want{goal, wait, ok}); got != tc.want {
				t.Errorf("NextTargetCapacity = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDoneAndPromotion(t *testing.T) {
	i := ptr.To[int32]
	finished := Upgrade{Active: side(i(0), i(0), -1), Pending: side(i(100), i(100), -1)}
	if !finished.Done() || !PromotionDue(finished) {
		t.Error("a finished upgrade is not done or not due for promotion")
	}
	capacityMovedTrafficNot := Upgrade{Active: side(i(0), i(10), -1), Pending: side(i(100), i(90), -1)}
	if !capacityMovedTrafficNot.Done() || PromotionDue(capacityMovedTrafficNot) {
		t.Error("promotion before all traffic moved")
	}
	unset := Upgrade{Active: side(nil, nil, -1), Pending: side(nil, i(100), -1)}
	if unset.Done() || PromotionDue(unset) {
		t.Error("unset capacities count as a finished upgrade")
	}
	rollingBack := finished
	rollingBack.Rollback = true
	if rollingBack.Done() || PromotionDue(rollingBack) {
		t.Error("a rollback is promoted")
	}
	backHome := Upgrade{Active: side(i(100), i(100), -1), Pending: side(i(0), i(0), -1), Rollback: true}
	if !backHome.Done() {
		t.Error("a finished rollback is not done")
	}
}

func TestRollbackComplete(t *testing.T) {
	i := ptr.To[int32]
	for name, tc := range map[string]struct {
		u         Upgrade
		headReady bool
		want      bool
	}{
		"all back":                         {Upgrade{Active: side(i(100), i(100), -1), Pending: side(i(0), i(0), -1), Rollback: true}, true, true},
		"pending keeps capacity":           {Upgrade{Active: side(i(100), i(100), -1), Pending: side(i(30), i(0), -1), Rollback: true}, true, false},
		"pending head not ready":           {Upgrade{Active: side(i(100), i(100), -1), Pending: side(i(30), i(0), -1), Rollback: true}, false, true},
		"active traffic not back":          {Upgrade{Active: side(i(100), i(80), -1), Pending: side(i(0), i(20), -1), Rollback: true}, false, false},
		"active capacity not back":         {Upgrade{Active: side(i(80), i(100), -1), Pending: side(i(0), i(0), -1), Rollback: true}, true, false},
		"no rollback":                      {Upgrade{Active: side(i(100), i(100), -1), Pending: side(i(0), i(0), -1)}, true, false},
		"defaults with the head not ready": {Upgrade{Active: side(nil, nil, -1), Pending: side(nil, nil, -1), Rollback: true}, false, true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := RollbackComplete(tc.u, tc.headReady); got != tc.want {
				t.Errorf("RollbackComplete = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDirectionAndInitialCapacity(t *testing.T) {
	for _, tc := range []struct {
		active, pending bool
		want            Direction
	}{{true, false, RollBack}, {false, true, Forward}, {false, false, RollBackThenUpgrade}, {true, true, RollBack}} {
		if got := DirectionOf(tc.active, tc.pending); got != tc.want {
			t.Errorf("DirectionOf(%v, %v) = %v, want %v", tc.active, tc.pending, got, tc.want)
		}
	}
	if InitialPendingCapacity(false) != 100 || InitialPendingCapacity(true) != 0 {
		t.Error("initial pending capacity")
	}
}
