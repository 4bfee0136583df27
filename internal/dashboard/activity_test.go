package dashboard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

func TestClassifyActivity(t *testing.T) {
	job := func(id string, s rayv1.JobStatus) dashboard.JobInfo {
		return dashboard.JobInfo{SubmissionID: id, JobStatus: s}
	}
	cases := map[string]struct {
		jobs []dashboard.JobInfo
		err  error
		want dashboard.Activity
	}{
		"no job":               {nil, nil, dashboard.ActivityIdle},
		"every job ended":      {[]dashboard.JobInfo{job("a", rayv1.JobStatusSucceeded), job("b", rayv1.JobStatusFailed), job("c", rayv1.JobStatusStopped)}, nil, dashboard.ActivityIdle},
		"a running job":        {[]dashboard.JobInfo{job("a", rayv1.JobStatusSucceeded), job("b", rayv1.JobStatusRunning)}, nil, dashboard.ActivityBusy},
		"a pending job":        {[]dashboard.JobInfo{job("a", rayv1.JobStatusPending)}, nil, dashboard.ActivityBusy},
		"a connected driver":   {[]dashboard.JobInfo{{Type: "DRIVER", JobID: "02000000", JobStatus: rayv1.JobStatusRunning}}, nil, dashboard.ActivityBusy},
		"a status Ray adds":    {[]dashboard.JobInfo{job("a", "SOMETHING_NEW")}, nil, dashboard.ActivityBusy},
		"the dashboard errors": {nil, errors.New("connection refused"), dashboard.ActivityUnknown},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := dashboard.ClassifyActivity(tc.jobs, tc.err); got.Activity != tc.want {
				t.Errorf("activity = %v (%s), want %v", got.Activity, got.Detail, tc.want)
			}
		})
	}
}

// stuckLister's ListJobs answers only when its context ends.
type stuckLister struct{ dashboard.Client }

func (stuckLister) ListJobs(ctx context.Context) ([]dashboard.JobInfo, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestActivityProbe: Report never waits on the dashboard; each look ends
// in a report and a notification; a hanging dashboard is reported unknown
// once the look's timeout passes; looks repeat on the injected clock.
func TestActivityProbe(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	notified := make(chan types.NamespacedName, 10)
	p := dashboard.NewActivityProbe(clk, time.Minute, 50*time.Millisecond, func(k types.NamespacedName) { notified <- k })
	fake := dashboardtest.NewFake()
	fake.AddJob(dashboard.JobInfo{SubmissionID: "a", JobStatus: rayv1.JobStatusRunning})
	busy := types.NamespacedName{Namespace: "ns", Name: "busy"}
	hung := types.NamespacedName{Namespace: "ns", Name: "hung"}

	for _, k := range []types.NamespacedName{busy, hung} {
		c := dashboard.Client(fake)
		if k == hung {
			c = stuckLister{fake}
		}
		if r := p.Report(k, func() (dashboard.Client, error) { return c, nil }); !r.At.IsZero() {
			t.Fatalf("first report of %s = %+v, want none yet", k, r)
		}
	}
	want := map[types.NamespacedName]dashboard.Activity{busy: dashboard.ActivityBusy, hung: dashboard.ActivityUnknown}
	for range want {
		k := <-notified
		if r := p.Report(k, nil); r.Activity != want[k] || r.At.IsZero() {
			t.Errorf("report of %s = %+v, want %v", k, r, want[k])
		}
	}

	fake.SetJobStatus("a", rayv1.JobStatusSucceeded, "")
	p.Stop(hung)
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond) // wait for the busy probe to arm its timer, not for an outcome
	}
	clk.Step(time.Minute)
	if k := <-notified; k != busy {
		t.Fatalf("notified %s, want %s", k, busy)
	}
	if r := p.Report(busy, nil); r.Activity != dashboard.ActivityIdle {
		t.Errorf("report after the job ended = %+v, want idle", r)
	}
	if p.Probing(hung) {
		t.Errorf("hung still probed after Stop")
	}
	p.Stop(busy)
}
