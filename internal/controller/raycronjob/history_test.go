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

// TestHistoryLimits: the oldest finished RayJobs beyond each limit are
// deleted, with an event each; running ones, ones this RayCronJob does not
// own and, without limits, all of them are kept.
func TestHistoryLimits(t *testing.T) {
	// Minutes 1-5 succeeded, 6-8 failed (8 failed validation), 9 runs.
	var jobs []client.Object
	for m := 1; m <= 5; m++ {
		jobs = append(jobs, ownedJob(minute(m)).Finished(true, minute(m).Add(30*time.Second)).Obj())
	}
	for m := 6; m <= 7; m++ {
		jobs = append(jobs, ownedJob(minute(m)).Finished(false, minute(m).Add(30*time.Second)).Obj())
	}
	jobs = append(jobs,
		ownedJob(minute(8)).DeploymentStatus(rayv1.JobDeploymentStatusValidationFailed).Obj(),
		ownedJob(minute(9)).DeploymentStatus(rayv1.JobDeploymentStatusRunning).Obj(),
		wrappers.MakeRayJob("not-mine", testNS).Label(rayv1.LabelCronJobName, testName).Finished(true, minute(0)).Obj(),
	)
	pruned := func(at time.Time, why string) string {
		return fmt.Sprintf("Normal DeletedRayJob Deleted RayJob %s: %s", jobName(at), why)
	}
	tests := map[string]struct {
		cj         *wrappers.RayCronJobWrapper
		wantJobs   []string
		wantEvents []string
	}{
		"unset keeps everything": {cj: cronJob(),
			wantJobs: append([]string{"not-mine"}, jobNames(minutes(1, 9)...)...)},
		"3 and 1": {cj: cronJob().HistoryLimits(3, 1),
			wantJobs: append([]string{"not-mine"}, jobNames(minute(3), minute(4), minute(5), minute(8), minute(9))...),
			wantEvents: []string{
				pruned(minute(1), "successfulJobsHistoryLimit is 3"), pruned(minute(2), "successfulJobsHistoryLimit is 3"),
				pruned(minute(6), "failedJobsHistoryLimit is 1"), pruned(minute(7), "failedJobsHistoryLimit is 1"),
			}},
		"0 and 0 keep only the running one": {cj: cronJob().HistoryLimits(0, 0),
			wantJobs: []string{"not-mine", jobName(minute(9))},
			wantEvents: []string{
				pruned(minute(1), "successfulJobsHistoryLimit is 0"), pruned(minute(2), "successfulJobsHistoryLimit is 0"),
				pruned(minute(3), "successfulJobsHistoryLimit is 0"), pruned(minute(4), "successfulJobsHistoryLimit is 0"),
				pruned(minute(5), "successfulJobsHistoryLimit is 0"),
				pruned(minute(6), "failedJobsHistoryLimit is 0"), pruned(minute(7), "failedJobsHistoryLimit is 0"),
				pruned(minute(8), "failedJobsHistoryLimit is 0"),
			}},
		"limits above the counts": {cj: cronJob().HistoryLimits(10, 10),
			wantJobs: append([]string{"not-mine"}, jobNames(minutes(1, 9)...)...)},
		"pruned while suspended too": {cj: cronJob().HistoryLimits(5, 0).Suspend(true),
			wantJobs: append([]string{"not-mine"}, jobNames(append(minutes(1, 5), minute(9))...)...),
			wantEvents: []string{
				pruned(minute(6), "failedJobsHistoryLimit is 0"), pruned(minute(7), "failedJobsHistoryLimit is 0"),
				pruned(minute(8), "failedJobsHistoryLimit is 0"),
				"Normal SuspendedRayCronJob RayCronJob suspended, no new RayJobs will be created",
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now := minute(9).Add(40 * time.Second)
			e := newEnv(t, now, append([]client.Object{tc.cj.LastScheduleTime(minute(9)).Obj()}, jobs...)...)
			e.reconcile(t)
			if diff := cmp.Diff(tc.wantJobs, e.rayJobNames(t)); diff != "" {
				t.Errorf("RayJobs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, e.drainEvents()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := e.cronJob(t).Status.LastSuccessfulTime; got == nil || !got.Time.Equal(minute(5).Add(30*time.Second)) {
				t.Errorf("lastSuccessfulTime %v, want 10:05:30 (the newest success, pruned or not)", got)
			}
		})
	}
}
