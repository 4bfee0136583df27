package rayservice

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/features"
)

func deadlineService(timeout, backoff *int32) *rayv1.RayService {
	return &rayv1.RayService{Spec: rayv1.RayServiceSpec{UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{
		PendingClusterTimeoutSeconds: timeout, PendingClusterRetryBackoffSeconds: backoff,
	}}}
}

// TestPendingTimeout: unset (no strategy, or no field) is no deadline.
func TestPendingTimeout(t *testing.T) {
	if d := pendingTimeout(&rayv1.RayService{}); d != 0 {
		t.Errorf("no upgradeStrategy: %v", d)
	}
	if d := pendingTimeout(deadlineService(nil, nil)); d != 0 {
		t.Errorf("no timeout: %v", d)
	}
	if d := pendingTimeout(deadlineService(ptr.To[int32](90), nil)); d != 90*time.Second {
		t.Errorf("90 s: %v", d)
	}
}

// TestRetryBackoff: the back-off doubles with each abandonment of the same
// spec, is capped at an hour (unless the base is longer), and is 0 without
// the field.
func TestRetryBackoff(t *testing.T) {
	cases := []struct {
		base      *int32
		abandoned int32
		want      time.Duration
	}{
		{nil, 1, 0},
		{ptr.To[int32](60), 1, time.Minute},
		{ptr.To[int32](60), 2, 2 * time.Minute},
		{ptr.To[int32](60), 4, 8 * time.Minute},
		{ptr.To[int32](60), 10, time.Hour},
		{ptr.To[int32](60), 1000, time.Hour},
		{ptr.To[int32](7200), 3, 2 * time.Hour},
	}
	for _, tc := range cases {
		if got := retryBackoff(deadlineService(ptr.To[int32](600), tc.base), tc.abandoned); got != tc.want {
			t.Errorf("base %v, abandoned %d: %v, want %v", ptr.Deref(tc.base, 0), tc.abandoned, got, tc.want)
		}
	}
}

// TestRetryWait: only the abandoned spec is held back, until its next
// attempt time, or for ever without one; another spec starts at once.
func TestRetryWait(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	next := metav1.NewTime(now.Add(30 * time.Second))
	att := &rayv1.UpgradeAttempt{AbandonedClusterSpecHash: "h1", NextAttemptTime: &next}
	cases := []struct {
		name     string
		att      *rayv1.UpgradeAttempt
		hash     string
		at       time.Time
		held     bool
		wantWait time.Duration
	}{
		{"no record", nil, "h1", now, false, 0},
		{"nothing abandoned", &rayv1.UpgradeAttempt{}, "h1", now, false, 0},
		{"same spec in back-off", att, "h1", now, true, 30 * time.Second},
		{"same spec after back-off", att, "h1", now.Add(30 * time.Second), false, 0},
		{"changed spec in back-off", att, "h2", now, false, 0},
		{"same spec, no retry", &rayv1.UpgradeAttempt{AbandonedClusterSpecHash: "h1"}, "h1", now.Add(time.Hour), true, 0},
	}
	for _, tc := range cases {
		held, wait := retryWait(tc.att, tc.hash, tc.at)
		if held != tc.held || wait != tc.wantWait {
			t.Errorf("%s: held %v wait %v, want %v %v", tc.name, held, wait, tc.held, tc.wantWait)
		}
	}
}

// TestAbandonable: a pending cluster may go only while nothing serves
// from it: not once the Services select it, not during a rollback, and
// for an incremental upgrade not once traffic or capacity moved.
func TestAbandonable(t *testing.T) {
	r := New(Deps{}, Options{Features: features.NewGate()})
	base := func(incremental bool) *scope {
		rs := deadlineService(ptr.To[int32](60), nil)
		if incremental {
			rs.Spec.UpgradeStrategy.Type = ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade)
		}
		rs.Status.ActiveServiceStatus.RayClusterName = "svc-a"
		rs.Status.PendingServiceStatus.RayClusterName = "svc-b"
		s := newScope(rs, time.Now())
		s.active = &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "svc-a"}}
		s.pending = &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "svc-b"}}
		s.servingCluster = "svc-a"
		if incremental {
			rs.Status.ActiveServiceStatus.TargetCapacity = ptr.To[int32](100)
			rs.Status.PendingServiceStatus.TargetCapacity = ptr.To[int32](0)
		}
		return s
	}
	cases := []struct {
		name        string
		incremental bool
		mutate      func(*scope)
		want        bool
	}{
		{"blue/green, never ready", false, func(*scope) {}, true},
		{"blue/green, Services switched", false, func(s *scope) { s.servingCluster = "svc-b" }, false},
		{"pending cluster missing", false, func(s *scope) { s.pending = nil }, false},
		{"pending cluster being deleted", false, func(s *scope) { s.pending.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, false},
		{"rollback", false, func(s *scope) {
			conditions.MarkTrue(&s.rs.Status.Conditions, rayv1.RollbackInProgress, rayv1.DesiredClusterSpecChanged, "", conditions.At(metav1.Now(), s.rs.Generation))
		}, false},
		{"incremental, nothing moved", true, func(*scope) {}, true},
		{"incremental, pending capacity grown", true, func(s *scope) {
			s.rs.Status.PendingServiceStatus.TargetCapacity = ptr.To[int32](50)
		}, false},
		{"incremental, traffic moved", true, func(s *scope) {
			s.rs.Status.PendingServiceStatus.TrafficRoutedPercent = ptr.To[int32](10)
		}, false},
		{"incremental, active capacity shrunk", true, func(s *scope) {
			s.rs.Status.ActiveServiceStatus.TargetCapacity = ptr.To[int32](50)
		}, false},
	}
	for _, tc := range cases {
		s := base(tc.incremental)
		tc.mutate(s)
		if got := r.abandonable(s); got != tc.want {
			t.Errorf("%s: abandonable %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPromotionSettlesAttempt: the pass that promotes the retried attempt's
// cluster writes a status without the attempt and without UpgradeAbandoned
// (seen on real Ray: the status said "a new upgrade attempt runs" one pass
// after the new cluster took over).
func TestPromotionSettlesAttempt(t *testing.T) {
	r := New(Deps{}, Options{Features: features.NewGate()})
	rs := deadlineService(ptr.To[int32](60), nil)
	rs.Name = "svc"
	now := metav1.Now()
	rs.Status.ActiveServiceStatus.RayClusterName = "svc-a"
	rs.Status.PendingServiceStatus.RayClusterName = "svc-c"
	rs.Status.UpgradeAttempt = &rayv1.UpgradeAttempt{RayClusterName: "svc-c", StartTime: &now,
		AbandonedClusterSpecHash: "old", AbandonedRayClusterName: "svc-b", AbandonedTime: &now, Abandoned: 1}
	conditions.MarkFalse(&rs.Status.Conditions, rayv1.UpgradeAbandoned, rayv1.UpgradeRetried, "retrying", conditions.At(now, rs.Generation))
	s := newScope(rs, now.Time)
	s.active = &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "svc-a"}}
	pending, err := r.desiredCluster(s, "svc-c")
	if err != nil {
		t.Fatal(err)
	}
	s.pending, s.servingCluster = pending, "svc-c"

	r.promote(s)
	r.settleUpgradeAttempt(s)
	if s.activeName() != "svc-c" {
		t.Fatalf("active %q after the promotion, want svc-c", s.activeName())
	}
	if c := conditions.Get(rs.Status.Conditions, rayv1.UpgradeAbandoned); c != nil {
		t.Errorf("UpgradeAbandoned %+v in the promoting pass, want it removed", c)
	}
	if *rs.Status.UpgradeAttempt != (rayv1.UpgradeAttempt{}) {
		t.Errorf("upgradeAttempt %+v in the promoting pass, want it empty", rs.Status.UpgradeAttempt)
	}
}
