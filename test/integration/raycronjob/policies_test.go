package raycronjob_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestForbidSkipsWhileRunning: with Forbid, a time that comes while the
// previous RayJob runs is skipped (JobAlreadyActive); once that RayJob is
// Complete, status.active empties, lastSuccessfulTime is set and the next
// time runs.
func TestForbidSkipsWhileRunning(t *testing.T) {
	w := newWorld(t)
	_, first := w.createCronJob(everyMinute("forbid").ConcurrencyPolicy(rayv1.ForbidConcurrent).Obj())
	w.waitScheduled("forbid", first)
	running := jobName("forbid", first)
	w.setJobStatus(running, func(j *wrappers.RayJobWrapper) { j.DeploymentStatus(rayv1.JobDeploymentStatusRunning) })

	w.waitScheduled("forbid", first.Add(time.Minute))
	w.WaitEvent("forbid", "JobAlreadyActive")
	if diff := cmp.Diff([]string{running}, w.rayJobNames()); diff != "" {
		t.Fatalf("RayJobs while one runs (-want +got):\n%s", diff)
	}

	ended := first.Add(time.Minute + 30*time.Second).Truncate(time.Second)
	w.setJobStatus(running, func(j *wrappers.RayJobWrapper) { j.Finished(true, ended) })
	w.Eventually("status after the RayJob finished", func() (bool, error) {
		st := w.cronJob("forbid").Status
		return len(st.Active) == 0 && st.LastSuccessfulTime != nil && st.LastSuccessfulTime.Time.Equal(ended), nil
	})
	third := first.Add(2 * time.Minute)
	w.waitScheduled("forbid", third)
	if diff := cmp.Diff(namesOf("forbid", first, third), w.rayJobNames()); diff != "" {
		t.Errorf("RayJobs after it finished (-want +got):\n%s", diff)
	}
}

// TestReplaceReplacesRunning: with Replace, the running RayJob is deleted
// and the new one created; status.active names only the new one.
func TestReplaceReplacesRunning(t *testing.T) {
	w := newWorld(t)
	_, first := w.createCronJob(everyMinute("replace").ConcurrencyPolicy(rayv1.ReplaceConcurrent).Obj())
	w.waitScheduled("replace", first)
	w.setJobStatus(jobName("replace", first), func(j *wrappers.RayJobWrapper) { j.DeploymentStatus(rayv1.JobDeploymentStatusRunning) })

	second := first.Add(time.Minute)
	cj := w.waitScheduled("replace", second)
	if diff := cmp.Diff(namesOf("replace", second), w.rayJobNames()); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
	if len(cj.Status.Active) != 1 || cj.Status.Active[0].Name != jobName("replace", second) {
		t.Errorf("status.active %+v, want only %s", cj.Status.Active, jobName("replace", second))
	}
	w.WaitEvent("replace", "DeletedRayJob")
}

// TestHistoryPruning: with limits 2 and 1, after runs that end in turn
// successful and failed, exactly the 2 newest successful and the newest
// failed RayJobs are left.
func TestHistoryPruning(t *testing.T) {
	w := newWorld(t)
	_, first := w.createCronJob(everyMinute("prune").HistoryLimits(2, 1).Obj())
	times := minutes(first, 6)
	for i, at := range times {
		w.waitScheduled("prune", at)
		end := at.Add(30 * time.Second)
		w.clock.SetTime(end)
		w.setJobStatus(jobName("prune", at), func(j *wrappers.RayJobWrapper) { j.Finished(i%2 == 0, end) })
	}
	// 0, 2, 4 succeeded; 1, 3, 5 failed. The pass after the last status
	// change prunes 0 and 1, 3.
	want := namesOf("prune", times[2], times[4], times[5])
	w.Eventually("the history pruned to the limits", func() (bool, error) {
		return cmp.Equal(want, w.rayJobNames()), nil
	})
	w.WaitEvent("prune", "DeletedRayJob")
}
