package raycronjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// ignoreServerFields leaves out what the fake API server fills in.
var ignoreServerFields = cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion", "CreationTimestamp")

// TestFirstTick: nothing before the first schedule time after creation,
// then exactly one RayJob with KubeRay's name, label, annotation, owner and
// spec, and a requeue at each next time.
func TestFirstTick(t *testing.T) {
	e := newEnv(t, t0, cronJob().Obj())

	if res := e.reconcile(t); res.RequeueAfter != 40*time.Second {
		t.Errorf("before the first time: requeue after %v, want 40s (at 10:01)", res.RequeueAfter)
	}
	if names := e.rayJobNames(t); len(names) != 0 {
		t.Fatalf("RayJobs before the first time: %v", names)
	}

	e.clock.SetTime(minute(1))
	if res := e.reconcile(t); res.RequeueAfter != time.Minute {
		t.Errorf("at the first time: requeue after %v, want 1m", res.RequeueAfter)
	}
	want := rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cron-29540761", Namespace: testNS,
			Labels:      map[string]string{"ray.io/cronjob-name": "cron"},
			Annotations: map[string]string{"ray.io/cronjob-scheduled-timestamp": "2026-03-02T10:01:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCronJob", Name: "cron", UID: "uid-cron",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: *wrappers.MakeRayJobSpec(),
	}
	got := e.rayJobs(t)
	if diff := cmp.Diff([]rayv1.RayJob{want}, got, ignoreServerFields, cmpopts.IgnoreTypes(metav1.TypeMeta{})); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
	wantStatus := rayv1.RayCronJobStatus{
		LastScheduleTime: &metav1.Time{Time: minute(1)},
		Active:           []corev1.ObjectReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Namespace: testNS, Name: "cron-29540761", UID: got[0].UID}},
		Conditions: []metav1.Condition{{Type: "SpecValid", Status: metav1.ConditionTrue, Reason: "ValidSpec",
			ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(t0)}},
	}
	if diff := cmp.Diff(wantStatus, e.cronJob(t).Status, timeEqual); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(createdEvents(minute(1)), e.drainEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"cron/created": 1}, e.metrics.counts); diff != "" {
		t.Errorf("creations metric (-want +got):\n%s", diff)
	}
}

// timeEqual compares metav1.Times by instant (the fake API server keeps
// the location of what it was given, a real one does not).
var timeEqual = cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })

// TestRequeueFollowsTheSchedule drives an hourly schedule by the requeues
// alone: one RayJob per hour, none in between.
func TestRequeueFollowsTheSchedule(t *testing.T) {
	e := newEnv(t, t0, cronJob().Schedule("@hourly").TimeZone("UTC").Obj())
	e.runUntil(t, t0.Add(3*time.Hour+time.Minute))
	want := jobNames(time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC))
	if diff := cmp.Diff(want, e.rayJobNames(t)); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
}

// TestCatchUpAfterDowntime: the times missed while the operator was down
// are all run in one pass, oldest first, as KubeRay runs them (it takes one
// pass each).
func TestCatchUpAfterDowntime(t *testing.T) {
	e := newEnv(t, minute(5).Add(30*time.Second), cronJob().LastScheduleTime(minute(1)).Obj(), ownedJob(minute(1)).Obj())
	if res := e.reconcile(t); res.RequeueAfter != 30*time.Second {
		t.Errorf("requeue after %v, want 30s (at 10:06)", res.RequeueAfter)
	}
	if diff := cmp.Diff(jobNames(minutes(1, 5)...), e.rayJobNames(t)); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(createdEvents(minutes(2, 5)...), e.drainEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := e.cronJob(t).Status.LastScheduleTime; !got.Equal(&metav1.Time{Time: minute(5)}) {
		t.Errorf("lastScheduleTime %v, want 10:05", got)
	}
}

// TestStaleViewCreatesNoDuplicate: a pass that sees an old
// lastScheduleTime (a status write lost, a stale read) or misses existing
// RayJobs in its list still leaves one RayJob per time: existing ones are
// recognized by name, and AlreadyExists counts as success.
func TestStaleViewCreatesNoDuplicate(t *testing.T) {
	t.Run("status behind the RayJobs", func(t *testing.T) {
		e := newEnv(t, minute(3).Add(5*time.Second), cronJob().LastScheduleTime(minute(1)).Obj(),
			ownedJob(minute(1)).Obj(), ownedJob(minute(2)).Obj(), ownedJob(minute(3)).Obj())
		e.reconcile(t)
		if diff := cmp.Diff(jobNames(minutes(1, 3)...), e.rayJobNames(t)); diff != "" {
			t.Errorf("RayJobs (-want +got):\n%s", diff)
		}
		if events := e.drainEvents(); len(events) != 0 {
			t.Errorf("events %q, want none", events)
		}
		if got := e.cronJob(t).Status.LastScheduleTime; !got.Equal(&metav1.Time{Time: minute(3)}) {
			t.Errorf("lastScheduleTime %v, want 10:03", got)
		}
	})
	t.Run("list misses them", func(t *testing.T) {
		e := newEnv(t, minute(2).Add(5*time.Second), cronJob().LastScheduleTime(minute(0)).Obj(),
			ownedJob(minute(1)).Obj(), ownedJob(minute(2)).Obj())
		e.r.LiveReader = newFakeClient(t, cronJob().LastScheduleTime(minute(0)).Obj()) // sees no RayJob
		e.reconcile(t)
		if diff := cmp.Diff(jobNames(minutes(1, 2)...), e.rayJobNames(t)); diff != "" {
			t.Errorf("RayJobs (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int{"cron/already_exists": 2}, e.metrics.counts); diff != "" {
			t.Errorf("creations metric (-want +got):\n%s", diff)
		}
		if got := e.cronJob(t).Status.LastScheduleTime; !got.Equal(&metav1.Time{Time: minute(2)}) {
			t.Errorf("lastScheduleTime %v, want 10:02", got)
		}
	})
}

// TestSuspendAndResume: while suspended, KubeRay's event and nothing else,
// no requeue; after resuming, the times missed meanwhile are caught up (as
// KubeRay does, up to MaxMissedTicks).
func TestSuspendAndResume(t *testing.T) {
	e := newEnv(t, minute(1), cronJob().Suspend(true).Obj())
	for _, now := range []time.Time{minute(1), minute(2), minute(3).Add(10 * time.Second)} {
		e.clock.SetTime(now)
		if res := e.reconcile(t); res.RequeueAfter != 0 {
			t.Errorf("suspended at %v: requeue after %v, want none", now, res.RequeueAfter)
		}
	}
	if names := e.rayJobNames(t); len(names) != 0 {
		t.Fatalf("RayJobs while suspended: %v", names)
	}
	suspended := "Normal SuspendedRayCronJob RayCronJob suspended, no new RayJobs will be created"
	if diff := cmp.Diff([]string{suspended, suspended, suspended}, e.drainEvents()); diff != "" {
		t.Errorf("events while suspended (-want +got):\n%s", diff)
	}
	if got := e.cronJob(t).Status.LastScheduleTime; got != nil {
		t.Errorf("lastScheduleTime %v while suspended, want none", got)
	}

	e.update(t, func(cj *rayv1.RayCronJob) { cj.Spec.Suspend = false })
	if res := e.reconcile(t); res.RequeueAfter != 50*time.Second {
		t.Errorf("resumed: requeue after %v, want 50s", res.RequeueAfter)
	}
	if diff := cmp.Diff(jobNames(minutes(1, 3)...), e.rayJobNames(t)); diff != "" {
		t.Errorf("RayJobs after resuming (-want +got):\n%s", diff)
	}
}

// TestIdlePassWritesNothing: a pass with nothing new (a RayJob event
// between two schedule times) leaves the RayCronJob as it was: the status,
// lastScheduleTime included, is written only when it changes.
func TestIdlePassWritesNothing(t *testing.T) {
	e := newEnv(t, minute(1), cronJob().Obj())
	e.reconcile(t)
	before := e.cronJob(t)
	e.clock.SetTime(minute(1).Add(20 * time.Second))
	if res := e.reconcile(t); res.RequeueAfter != 40*time.Second {
		t.Errorf("requeue after %v, want 40s", res.RequeueAfter)
	}
	after := e.cronJob(t)
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("resourceVersion %s -> %s: an idle pass wrote the RayCronJob", before.ResourceVersion, after.ResourceVersion)
	}
}

// TestBeingDeletedCreatesNothing: a RayCronJob held in deletion
// (foreground deletion waiting for its RayJobs) creates no RayJob when a
// schedule time comes, as a batch/v1 CronJob. KubeRay's controller does not
// look at the deletion and creates it, only for the garbage collector to
// delete it again (docs/dev/equivalence-audit.md).
func TestBeingDeletedCreatesNothing(t *testing.T) {
	cj := cronJob().Obj()
	cj.DeletionTimestamp = &metav1.Time{Time: t0}
	cj.Finalizers = []string{metav1.FinalizerDeleteDependents}
	e := newEnv(t, minute(1), cj)
	e.reconcile(t)
	if got := e.rayJobNames(t); len(got) != 0 {
		t.Errorf("RayJobs %v created for a RayCronJob being deleted", got)
	}
	if got := e.cronJob(t).Status.LastScheduleTime; got != nil {
		t.Errorf("lastScheduleTime %v recorded for a RayCronJob being deleted", got)
	}
}
