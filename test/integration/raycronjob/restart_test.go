package raycronjob_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestOperatorRestartCreatesNoDuplicate restarts the operator in the middle
// of a schedule: once with time passing while it is down (the missed times
// are caught up once each), and once with its last status write lost (the
// RayJobs it already created are recognized, not created again).
func TestOperatorRestartCreatesNoDuplicate(t *testing.T) {
	w := newWorld(t)
	_, first := w.createCronJob(everyMinute("restart").Obj())
	w.waitScheduled("restart", first)

	w.op.Stop()
	w.clock.SetTime(first.Add(3*time.Minute + 20*time.Second))
	w.op.Start()
	w.waitScheduled("restart", first.Add(3*time.Minute))
	if diff := cmp.Diff(namesOf("restart", minutes(first, 4)...), w.rayJobNames()); diff != "" {
		t.Fatalf("RayJobs after a restart with downtime (-want +got):\n%s", diff)
	}

	// The operator dies after creating the RayJobs but before its status
	// write lands: lastScheduleTime is back at the first time.
	w.op.Stop()
	cj := w.cronJob("restart")
	cj.Status.LastScheduleTime = timeOf(first)
	if err := w.Client.Status().Update(t.Context(), cj); err != nil {
		t.Fatal(err)
	}
	w.op.Start()
	w.waitScheduled("restart", first.Add(3*time.Minute))
	if diff := cmp.Diff(namesOf("restart", minutes(first, 4)...), w.rayJobNames()); diff != "" {
		t.Fatalf("RayJobs after a restart with a lost status write (-want +got):\n%s", diff)
	}

	w.op.Restart()
	w.waitScheduled("restart", first.Add(4*time.Minute))
	if diff := cmp.Diff(namesOf("restart", minutes(first, 5)...), w.rayJobNames()); diff != "" {
		t.Errorf("RayJobs after a plain restart and the next time (-want +got):\n%s", diff)
	}
}
