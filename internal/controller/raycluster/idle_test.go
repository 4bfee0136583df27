package raycluster

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

func TestIdleVerdict(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	timeout := time.Minute
	idleSince := func(since time.Time, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: string(rayv1.RayClusterIdle), Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(since)}}
	}
	report := func(a dashboard.Activity) dashboard.ActivityReport {
		return dashboard.ActivityReport{Activity: a, At: t0}
	}
	cases := map[string]struct {
		conditions []metav1.Condition
		report     dashboard.ActivityReport
		now        time.Time
		wantStatus metav1.ConditionStatus // "" means no verdict
		wantSince  time.Time
		wantEnd    bool
	}{
		"no report yet keeps the condition (restart)": {
			conditions: idleSince(t0.Add(-time.Hour), reasonNoActiveJobs), report: dashboard.ActivityReport{}, now: t0,
		},
		"first idle report starts the clock": {
			report: report(dashboard.ActivityIdle), now: t0, wantStatus: metav1.ConditionTrue, wantSince: t0,
		},
		"idle not yet past the threshold": {
			conditions: idleSince(t0, reasonNoActiveJobs), report: report(dashboard.ActivityIdle), now: t0.Add(59 * time.Second),
			wantStatus: metav1.ConditionTrue, wantSince: t0,
		},
		"idle past the threshold ends": {
			conditions: idleSince(t0, reasonNoActiveJobs), report: report(dashboard.ActivityIdle), now: t0.Add(time.Minute),
			wantStatus: metav1.ConditionTrue, wantSince: t0, wantEnd: true,
		},
		"an ended period does not count again after a resume": {
			conditions: idleSince(t0, reasonIdleTimeoutExceeded), report: report(dashboard.ActivityIdle), now: t0.Add(time.Hour),
			wantStatus: metav1.ConditionTrue, wantSince: t0.Add(time.Hour),
		},
		"a running job is not idle": {
			conditions: idleSince(t0, reasonNoActiveJobs), report: report(dashboard.ActivityBusy), now: t0.Add(time.Hour),
			wantStatus: metav1.ConditionFalse, wantSince: t0.Add(time.Hour),
		},
		"an unreadable dashboard is not idle": {
			conditions: idleSince(t0, reasonNoActiveJobs), report: report(dashboard.ActivityUnknown), now: t0.Add(time.Hour),
			wantStatus: metav1.ConditionUnknown, wantSince: t0.Add(time.Hour),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, end := idleVerdict(tc.conditions, tc.report, timeout, tc.now)
			if end != tc.wantEnd {
				t.Errorf("end = %v, want %v", end, tc.wantEnd)
			}
			if tc.wantStatus == "" {
				if c != nil {
					t.Fatalf("verdict = %+v, want none", c)
				}
				return
			}
			if c == nil || c.Status != tc.wantStatus || !c.LastTransitionTime.Time.Equal(tc.wantSince) {
				t.Fatalf("verdict = %+v, want status %s since %v", c, tc.wantStatus, tc.wantSince)
			}
		})
	}
}

func TestIdleWatched(t *testing.T) {
	base := func() *rayv1.RayCluster {
		rc := makeCluster("rc").obj()
		rc.Spec.IdleTerminationOptions = &rayv1.IdleTerminationOptions{Policy: rayv1.IdleTerminationSuspend, TimeoutSeconds: 60}
		rc.Status.State = rayv1.Ready
		return rc
	}
	cases := map[string]struct {
		mutate func(*rayv1.RayCluster)
		want   bool
	}{
		"standalone and ready": {func(*rayv1.RayCluster) {}, true},
		"option unset":         {func(rc *rayv1.RayCluster) { rc.Spec.IdleTerminationOptions = nil }, false},
		"not ready":            {func(rc *rayv1.RayCluster) { rc.Status.State = "" }, false},
		"suspended":            {func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr.To(true) }, false},
		"made by a RayJob": {func(rc *rayv1.RayCluster) {
			rc.Labels = map[string]string{rayv1.LabelOriginatedFromCRD: rayv1.KindRayJob}
		}, false},
		"made by a RayService": {func(rc *rayv1.RayCluster) {
			rc.Labels = map[string]string{rayv1.LabelOriginatedFromCRD: rayv1.KindRayService}
		}, false},
		"owned by a RayJob":     {func(rc *rayv1.RayCluster) { rc.OwnerReferences = []metav1.OwnerReference{owner(rayv1.KindRayJob)} }, false},
		"owned by a RayService": {func(rc *rayv1.RayCluster) { rc.OwnerReferences = []metav1.OwnerReference{owner(rayv1.KindRayService)} }, false},
		"owned by something else": {func(rc *rayv1.RayCluster) {
			rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"}}
		}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc := base()
			tc.mutate(rc)
			if got := idleWatched(rc); got != tc.want {
				t.Errorf("idleWatched = %v, want %v", got, tc.want)
			}
		})
	}
}

func owner(kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: rayv1.GroupVersion.String(), Kind: kind, Name: "owner", UID: "u"}
}
