package raycronjob

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestInvalidSpec: an invalid RayCronJob gets KubeRay's Warning event with
// the reason, the SpecValid condition False with the same message, no
// RayJob and no requeue; once fixed, the condition turns True and the
// schedule runs.
func TestInvalidSpec(t *testing.T) {
	suspendedTemplate := wrappers.MakeRayJobSpec()
	suspendedTemplate.Suspend = true
	tests := map[string]struct {
		cj   *wrappers.RayCronJobWrapper
		want string
	}{
		"bad schedule": {cj: cronJob().Schedule("every minute"),
			want: `spec.schedule "every minute" is not a valid cron schedule: expected exactly 5 fields, found 2: [every minute]`},
		"TZ in the schedule": {cj: cronJob().Schedule("TZ=UTC * * * * *"),
			want: "spec.schedule must not set a time zone (TZ= or CRON_TZ=): use spec.timeZone"},
		"unknown time zone": {cj: cronJob().TimeZone("Europe/Atlantis"),
			want: `spec.timeZone "Europe/Atlantis" is not a known IANA time zone name`},
		"never fires": {cj: cronJob().Schedule("0 0 31 2 *"), want: `spec.schedule "0 0 31 2 *" never fires`},
		"name too long": {cj: func() *wrappers.RayCronJobWrapper {
			w := cronJob()
			w.Name = strings.Repeat("c", 37)
			return w
		}(), want: "RayCronJob name should be no more than 36 characters, got 37"},
		"jobTemplate": {cj: cronJob().JobTemplate(suspendedTemplate),
			want: "spec.jobTemplate: The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cj := tc.cj.Obj()
			e := newEnv(t, minute(3), cj)
			res, err := e.r.Reconcile(t.Context(), reqFor(cj))
			if err != nil || res.RequeueAfter != 0 {
				t.Errorf("Reconcile = %+v, %v; want no requeue and no error", res, err)
			}
			if names := e.rayJobNames(t); len(names) != 0 {
				t.Errorf("RayJobs %v, want none", names)
			}
			wantEvent := "Warning InvalidRayCronJobSpec " + testNS + "/" + cj.Name + ": " + tc.want
			if diff := cmp.Diff([]string{wantEvent}, e.drainEvents()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			got := &rayv1.RayCronJob{}
			if err := e.c.Get(t.Context(), reqFor(cj).NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			want := []metav1.Condition{{Type: "SpecValid", Status: metav1.ConditionFalse, Reason: "InvalidRayCronJobSpec",
				Message: tc.want, ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(minute(3))}}
			if diff := cmp.Diff(want, got.Status.Conditions, timeEqual); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSpecFixed: a corrected schedule turns SpecValid True and the due
// times run (the invalid time never moved lastScheduleTime).
func TestSpecFixed(t *testing.T) {
	e := newEnv(t, minute(1).Add(10*time.Second), cronJob().Schedule("61 * * * *").Obj())
	e.reconcile(t)
	e.clock.SetTime(minute(2).Add(10 * time.Second))
	e.update(t, func(cj *rayv1.RayCronJob) { cj.Spec.Schedule = "* * * * *"; cj.Generation = 2 })
	if res := e.reconcile(t); res.RequeueAfter != 50*time.Second {
		t.Errorf("requeue after %v, want 50s", res.RequeueAfter)
	}
	if diff := cmp.Diff(jobNames(minute(1), minute(2)), e.rayJobNames(t)); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
	want := []metav1.Condition{{Type: "SpecValid", Status: metav1.ConditionTrue, Reason: "ValidSpec",
		ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(minute(2).Add(10 * time.Second))}}
	if diff := cmp.Diff(want, e.cronJob(t).Status.Conditions, timeEqual); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}
