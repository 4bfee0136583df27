package raycronjob

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestConcurrencyPolicy runs one pass with a RayJob of an earlier time in
// various states and checks the RayJobs, status.active and the events.
func TestConcurrencyPolicy(t *testing.T) {
	running := ownedJob(minute(1)).DeploymentStatus(rayv1.JobDeploymentStatusRunning)
	forbidden := func(times, running string) string {
		return fmt.Sprintf("Normal JobAlreadyActive Skipped the schedule time(s) %s: concurrencyPolicy is Forbid and RayJob %s has not finished", times, running)
	}
	deleted := func(at time.Time) string {
		return fmt.Sprintf("Normal DeletedRayJob Deleted RayJob %s: concurrencyPolicy is Replace and a new run is due", jobName(at))
	}
	tests := map[string]struct {
		policy     rayv1.ConcurrencyPolicy
		jobs       []client.Object
		now        time.Time
		wantJobs   []string
		wantActive []string
		wantEvents []string
	}{
		"unset allows": {jobs: []client.Object{running.Obj()},
			wantJobs: jobNames(minute(1), minute(2)), wantActive: jobNames(minute(1), minute(2)), wantEvents: createdEvents(minute(2))},
		"Allow starts next to the running one": {policy: rayv1.AllowConcurrent, jobs: []client.Object{running.Obj()},
			wantJobs: jobNames(minute(1), minute(2)), wantActive: jobNames(minute(1), minute(2)), wantEvents: createdEvents(minute(2))},
		"Forbid skips while one runs": {policy: rayv1.ForbidConcurrent, jobs: []client.Object{running.Obj()},
			wantJobs: jobNames(minute(1)), wantActive: jobNames(minute(1)),
			wantEvents: []string{forbidden("2026-03-02T10:02:00Z", jobName(minute(1)))}},
		"Forbid: a RayJob that was never picked up counts as running": {policy: rayv1.ForbidConcurrent, jobs: []client.Object{ownedJob(minute(1)).Obj()},
			wantJobs: jobNames(minute(1)), wantActive: jobNames(minute(1)),
			wantEvents: []string{forbidden("2026-03-02T10:02:00Z", jobName(minute(1)))}},
		"Forbid starts once it finished": {policy: rayv1.ForbidConcurrent, jobs: []client.Object{ownedJob(minute(1)).Finished(false, minute(1)).Obj()},
			wantJobs: jobNames(minute(1), minute(2)), wantActive: jobNames(minute(2)), wantEvents: createdEvents(minute(2))},
		"Forbid during a catch-up: the first one runs, the others are skipped": {policy: rayv1.ForbidConcurrent, now: minute(4).Add(5 * time.Second),
			wantJobs: jobNames(minute(2)), wantActive: jobNames(minute(2)),
			wantEvents: []string{created(minute(2)), forbidden("2026-03-02T10:03:00Z to 2026-03-02T10:04:00Z", jobName(minute(2)))}},
		"Forbid ignores RayJobs it does not own": {policy: rayv1.ForbidConcurrent, jobs: []client.Object{
			wrappers.MakeRayJob("other", testNS).Label(rayv1.LabelCronJobName, testName).DeploymentStatus(rayv1.JobDeploymentStatusRunning).Obj()},
			wantJobs: []string{"other", jobName(minute(2))}, wantActive: jobNames(minute(2)), wantEvents: createdEvents(minute(2))},
		"Replace deletes the running one first": {policy: rayv1.ReplaceConcurrent, jobs: []client.Object{running.Obj()},
			wantJobs: jobNames(minute(2)), wantActive: jobNames(minute(2)), wantEvents: []string{deleted(minute(1)), created(minute(2))}},
		"Replace leaves finished ones": {policy: rayv1.ReplaceConcurrent, jobs: []client.Object{ownedJob(minute(1)).Finished(true, minute(1)).Obj()},
			wantJobs: jobNames(minute(1), minute(2)), wantActive: jobNames(minute(2)), wantEvents: createdEvents(minute(2))},
		"Replace does not delete one being deleted again": {policy: rayv1.ReplaceConcurrent, jobs: []client.Object{running.Terminating(minute(1)).Obj()},
			wantJobs: jobNames(minute(1), minute(2)), wantActive: jobNames(minute(2)), wantEvents: createdEvents(minute(2))},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now := tc.now
			if now.IsZero() {
				now = minute(2).Add(5 * time.Second)
			}
			objs := append([]client.Object{cronJob().ConcurrencyPolicy(tc.policy).LastScheduleTime(minute(1)).Obj()}, tc.jobs...)
			e := newEnv(t, now, objs...)
			e.reconcile(t)
			if diff := cmp.Diff(tc.wantJobs, e.rayJobNames(t)); diff != "" {
				t.Errorf("RayJobs (-want +got):\n%s", diff)
			}
			var active []string
			for _, ref := range e.cronJob(t).Status.Active {
				active = append(active, ref.Name)
			}
			if diff := cmp.Diff(tc.wantActive, active); diff != "" {
				t.Errorf("status.active (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, e.drainEvents()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := e.cronJob(t).Status.LastScheduleTime; !got.Time.Equal(now.Truncate(time.Minute)) {
				t.Errorf("lastScheduleTime %v, want %v: every due time is dealt with", got, now.Truncate(time.Minute))
			}
		})
	}
}

// TestForbidThenResume: a Forbid skip is final; when the running RayJob
// finishes, the next time runs, not the skipped one.
func TestForbidThenResume(t *testing.T) {
	e := newEnv(t, minute(2).Add(5*time.Second), cronJob().ConcurrencyPolicy(rayv1.ForbidConcurrent).LastScheduleTime(minute(1)).Obj(),
		ownedJob(minute(1)).DeploymentStatus(rayv1.JobDeploymentStatusRunning).Obj())
	e.reconcile(t)
	e.clock.SetTime(minute(2).Add(30 * time.Second))
	e.setDeploymentStatus(t, jobName(minute(1)), func(w *wrappers.RayJobWrapper) { w.Finished(true, minute(2).Add(30*time.Second)) })
	if res := e.reconcile(t); res.RequeueAfter != 30*time.Second {
		t.Errorf("after the RayJob finished: requeue after %v, want 30s", res.RequeueAfter)
	}
	if diff := cmp.Diff(jobNames(minute(1)), e.rayJobNames(t)); diff != "" {
		t.Errorf("RayJobs before the next time (-want +got):\n%s", diff)
	}
	e.clock.SetTime(minute(3))
	e.reconcile(t)
	if diff := cmp.Diff(jobNames(minute(1), minute(3)), e.rayJobNames(t)); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
}
