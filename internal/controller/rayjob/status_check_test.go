package rayjob

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// errUnreachable is the dashboard failure of these tests.
var errUnreachable = errors.New("dial tcp: connection refused")

// withStatusCheckTimeout sets RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS.
func withStatusCheckTimeout(d time.Duration) envOption {
	return func(o *Options) { o.StatusCheckTimeout = d }
}

// failingSince sets status.jobStatusCheckFailureStartTime, as a previous
// operator would have left it.
func failingSince(at time.Time) jobOption {
	return func(job *rayv1.RayJob) { job.Status.JobStatusCheckFailureStartTime = &metav1.Time{Time: at} }
}

// statusCheckWorld is a Running RayJob whose Ray job is RUNNING, with its
// ready cluster, head Service and (K8sJobMode) running submitter.
func statusCheckWorld(t *testing.T, m rayv1.JobSubmissionMode, jobOpts []jobOption, opts ...envOption) *testEnv {
	t.Helper()
	jobOpts = append([]jobOption{mode(m), inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusRunning)}, jobOpts...)
	objs := []client.Object{makeJob(jobOpts...), makeCluster(rayv1.Ready), headService()}
	if m == rayv1.K8sJobMode {
		objs = append(objs, submitterJob("", t0))
	}
	e := newEnv(t, objs, opts...)
	e.dash.AddJob(rayJobInfo(rayv1.JobStatusRunning, 0))
	return e
}

// checkState is what a test expects of the RayJob's status after a pass.
type checkState struct {
	Deployment rayv1.JobDeploymentStatus
	JobStatus  rayv1.JobStatus
	Reason     rayv1.JobFailedReason
	Since      *time.Time
}

func (e *testEnv) checkState(t *testing.T) checkState {
	t.Helper()
	st := e.job(t).Status
	got := checkState{Deployment: st.JobDeploymentStatus, JobStatus: st.JobStatus, Reason: st.Reason}
	if st.JobStatusCheckFailureStartTime != nil {
		got.Since = ptr.To(st.JobStatusCheckFailureStartTime.UTC())
	}
	return got
}

// runningSince is a Running RayJob with a RUNNING Ray job whose status
// checks have failed since since (nil: they have not).
func runningSince(since *time.Time) checkState {
	return checkState{Deployment: rayv1.JobDeploymentStatusRunning, JobStatus: rayv1.JobStatusRunning, Since: since}
}

// TestStatusCheckTimeoutExceeded: a dashboard that stays unreachable fails
// the RayJob exactly when the timeout has passed since the first failure,
// with KubeRay's reason and message, jobStatus left as it was and no retry
// although backoffLimit allows one. Every pass before keeps the first
// failure's time, and the back-off never sleeps past the timeout.
func TestStatusCheckTimeoutExceeded(t *testing.T) {
	tests := map[string]struct {
		mode    rayv1.JobSubmissionMode
		timeout time.Duration // zero: the default
		// wantTimeout is the timeout in force and wantRequeues the requeue
		// of each failing pass before it ends.
		wantTimeout  time.Duration
		wantRequeues []time.Duration
	}{
		"K8sJobMode, default 300 s": {mode: rayv1.K8sJobMode, wantTimeout: 300 * time.Second,
			wantRequeues: []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 24 * time.Second, 48 * time.Second,
				time.Minute, time.Minute, time.Minute, 27 * time.Second}},
		"HTTPMode, default 300 s": {mode: rayv1.HTTPMode, wantTimeout: 300 * time.Second,
			wantRequeues: []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 24 * time.Second, 48 * time.Second,
				time.Minute, time.Minute, time.Minute, 27 * time.Second}},
		"K8sJobMode, knob set to 10 s": {mode: rayv1.K8sJobMode, timeout: 10 * time.Second, wantTimeout: 10 * time.Second,
			wantRequeues: []time.Duration{3 * time.Second, 6 * time.Second, time.Second}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := statusCheckWorld(t, tc.mode, []jobOption{func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](2) }},
				withStatusCheckTimeout(tc.timeout))
			e.dash.SetError(dashboardtest.OpGetJobInfo, errUnreachable)

			var got []time.Duration
			for i := 0; e.clock.Now().Before(t0.Add(tc.wantTimeout)) && i < 20; i++ {
				wait := e.pass(t)
				if diff := cmp.Diff(runningSince(&t0), e.checkState(t)); diff != "" {
					t.Fatalf("failing pass at %v (-want +got):\n%s", e.clock.Now().Sub(t0), diff)
				}
				got = append(got, wait)
				e.clock.Step(wait)
			}
			if diff := cmp.Diff(tc.wantRequeues, got); diff != "" {
				t.Fatalf("requeues before the timeout (-want +got):\n%s", diff)
			}

			e.pass(t)
			want := checkState{Deployment: rayv1.JobDeploymentStatusFailed, JobStatus: rayv1.JobStatusRunning,
				Reason: rayv1.JobStatusCheckTimeoutExceeded, Since: &t0}
			if diff := cmp.Diff(want, e.checkState(t)); diff != "" {
				t.Fatalf("pass at the timeout (-want +got):\n%s", diff)
			}
			wantMsg := "Job status checks have been failing since 2026-01-01 00:00:00; exceeded timeout of " +
				map[time.Duration]string{300 * time.Second: "300s", 10 * time.Second: "10s"}[tc.wantTimeout]
			if got := e.job(t).Status.Message; got != wantMsg {
				t.Fatalf("message %q, want %q", got, wantMsg)
			}
		})
	}
}

// TestStatusCheckRecovery: a dashboard that answers again before the
// timeout clears the failure time and the RayJob goes on; a later outage
// starts a new timer. The pass at the timeout asks a last time even inside
// the back-off (deliberate difference: KubeRay fails the RayJob at the
// start of that pass without asking). A failure time left in the status by
// an operator restart counts.
func TestStatusCheckRecovery(t *testing.T) {
	t.Run("recovers during the last back-off", func(t *testing.T) {
		e := statusCheckWorld(t, rayv1.K8sJobMode, nil)
		e.dash.SetError(dashboardtest.OpGetJobInfo, errUnreachable)
		for e.clock.Now().Before(t0.Add(273 * time.Second)) {
			e.clock.Step(e.pass(t))
		}
		if got := e.pass(t); got != 27*time.Second {
			t.Fatalf("failure at 273 s: requeue %v, want 27s (the timeout)", got)
		}
		e.dash.SetError(dashboardtest.OpGetJobInfo, nil)

		// A pass that a watch event brings 1 s before the timeout stays in
		// the back-off and does not ask.
		e.clock.SetTime(t0.Add(299 * time.Second))
		if got := e.pass(t); got != time.Second {
			t.Fatalf("pass at 299 s: requeue %v, want 1s", got)
		}
		if diff := cmp.Diff(runningSince(&t0), e.checkState(t)); diff != "" {
			t.Fatalf("pass at 299 s (-want +got):\n%s", diff)
		}

		e.clock.Step(time.Second)
		e.pass(t)
		if diff := cmp.Diff(runningSince(nil), e.checkState(t)); diff != "" {
			t.Fatalf("pass at the timeout, dashboard back (-want +got):\n%s", diff)
		}

		// Well past the first failure's timeout the RayJob still runs; a
		// new outage starts a new timer.
		e.clock.SetTime(t0.Add(400 * time.Second))
		e.pass(t)
		e.dash.SetError(dashboardtest.OpGetJobInfo, errUnreachable)
		e.clock.Step(defaultRequeue)
		e.pass(t)
		restart := t0.Add(403 * time.Second)
		if diff := cmp.Diff(runningSince(&restart), e.checkState(t)); diff != "" {
			t.Fatalf("new outage (-want +got):\n%s", diff)
		}
	})
	t.Run("the first failure's time is kept to the second, as the API server keeps it", func(t *testing.T) {
		e := statusCheckWorld(t, rayv1.K8sJobMode, nil, withStatusCheckTimeout(time.Second))
		e.clock.SetTime(t0.Add(1500 * time.Millisecond))
		e.dash.SetError(dashboardtest.OpGetJobInfo, errUnreachable)
		if got := e.pass(t); got != 500*time.Millisecond {
			t.Fatalf("requeue %v, want 500ms (1 s after the stored 00:00:01)", got)
		}
		since := t0.Add(time.Second)
		if diff := cmp.Diff(runningSince(&since), e.checkState(t)); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		e.clock.Step(500 * time.Millisecond)
		e.pass(t)
		want := checkState{Deployment: rayv1.JobDeploymentStatusFailed, JobStatus: rayv1.JobStatusRunning,
			Reason: rayv1.JobStatusCheckTimeoutExceeded, Since: &since}
		if diff := cmp.Diff(want, e.checkState(t)); diff != "" {
			t.Fatalf("at 00:00:02 (-want +got):\n%s", diff)
		}
	})
	before := t0.Add(-300 * time.Second)
	for name, tc := range map[string]struct {
		dashboardErr error
		want         checkState
	}{
		"after a restart, timeout passed, dashboard still failing": {dashboardErr: errUnreachable,
			want: checkState{Deployment: rayv1.JobDeploymentStatusFailed, JobStatus: rayv1.JobStatusRunning,
				Reason: rayv1.JobStatusCheckTimeoutExceeded, Since: &before}},
		"after a restart, timeout passed, dashboard answers": {want: runningSince(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			e := statusCheckWorld(t, rayv1.K8sJobMode, []jobOption{failingSince(before)})
			e.dash.SetError(dashboardtest.OpGetJobInfo, tc.dashboardErr)
			e.pass(t)
			if diff := cmp.Diff(tc.want, e.checkState(t)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatusCheckHTTPModeSubmission: in HTTPMode a failed (re)submission of
// a job the dashboard forgot starts the timer, as a failed status request
// does, and a successful submission clears it.
func TestStatusCheckHTTPModeSubmission(t *testing.T) {
	e := statusCheckWorld(t, rayv1.HTTPMode, nil)
	e.dash.ForgetJob(testJobID)
	e.dash.SetError(dashboardtest.OpSubmitJob, errUnreachable)
	e.clock.Step(e.pass(t))
	if diff := cmp.Diff(runningSince(&t0), e.checkState(t)); diff != "" {
		t.Fatalf("failed submission (-want +got):\n%s", diff)
	}
	e.dash.SetError(dashboardtest.OpSubmitJob, nil)
	e.pass(t)
	if diff := cmp.Diff(runningSince(nil), e.checkState(t)); diff != "" {
		t.Fatalf("submitted (-want +got):\n%s", diff)
	}
	if _, ok := e.dash.Job(testJobID); !ok {
		t.Fatal("the dashboard does not know the resubmitted job")
	}
}

// TestResetAttemptClearsStatusCheckFailure: a suspended or retried RayJob
// starts its next attempt without the last one's failure time.
func TestResetAttemptClearsStatusCheckFailure(t *testing.T) {
	job := makeJob(inState(rayv1.JobDeploymentStatusSuspending), failingSince(t0))
	resetAttempt(job)
	if job.Status.JobStatusCheckFailureStartTime != nil {
		t.Fatalf("jobStatusCheckFailureStartTime = %v after resetAttempt, want nil", job.Status.JobStatusCheckFailureStartTime)
	}
}

// TestSubmitterFinishedTimeoutAsksOnceMore: in K8sJobMode a submitter that
// finished while the dashboard was failing does not let the back-off sleep
// past the submitter-finished timeout (30 s): the pass at the timeout asks
// once more. A Ray job that failed meanwhile ends the RayJob with AppFailed
// (KubeRay would fail it with TransitionGracePeriodExceeded without
// asking); a Ray job still running fails it with
// TransitionGracePeriodExceeded as KubeRay does. A dashboard still failing
// decides nothing: it is asked again every 3 s (not after the back-off,
// which would sleep through the grace) until submitterAnswerGrace ends, and
// a Ray job that succeeded meanwhile
// completes the RayJob; one that fails throughout the grace fails it with
// TransitionGracePeriodExceeded at its end.
func TestSubmitterFinishedTimeoutAsksOnceMore(t *testing.T) {
	tests := map[string]struct {
		atTimeout func(e *testEnv)
		// inGrace, when set, is what the dashboard does after the first
		// failing pass past the timeout.
		inGrace    func(e *testEnv)
		want       rayv1.JobDeploymentStatus
		wantStatus rayv1.JobStatus
		wantReason rayv1.JobFailedReason
		// wantGraceRequeues are the requeues of the failing passes in the
		// grace, the one at the timeout first.
		wantGraceRequeues []time.Duration
	}{
		"Ray job failed during the outage": {
			atTimeout: func(e *testEnv) {
				e.dash.SetError(dashboardtest.OpGetJobInfo, nil)
				e.dash.SetJobStatus(testJobID, rayv1.JobStatusFailed, "boom")
			},
			want: rayv1.JobDeploymentStatusFailed, wantStatus: rayv1.JobStatusFailed, wantReason: rayv1.AppFailed,
		},
		"Ray job still running": {
			atTimeout: func(e *testEnv) { e.dash.SetError(dashboardtest.OpGetJobInfo, nil) },
			want:      rayv1.JobDeploymentStatusFailed, wantStatus: rayv1.JobStatusFailed,
			wantReason: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded,
		},
		"dashboard failing throughout the grace": {
			atTimeout: func(*testEnv) {},
			wantGraceRequeues: []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second,
				3 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second},
			want: rayv1.JobDeploymentStatusFailed, wantStatus: rayv1.JobStatusFailed,
			wantReason: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded,
		},
		"dashboard answers in the grace: Ray job succeeded": {
			atTimeout: func(*testEnv) {},
			inGrace: func(e *testEnv) {
				e.dash.SetError(dashboardtest.OpGetJobInfo, nil)
				e.dash.SetJobStatus(testJobID, rayv1.JobStatusSucceeded, "done")
			},
			wantGraceRequeues: []time.Duration{3 * time.Second},
			want:              rayv1.JobDeploymentStatusComplete, wantStatus: rayv1.JobStatusSucceeded,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			job := makeJob(mode(rayv1.K8sJobMode), inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusRunning))
			e := newEnv(t, []client.Object{job, makeCluster(rayv1.Ready), headService(), submitterJob(batchv1.JobComplete, t0)})
			e.dash.AddJob(rayJobInfo(rayv1.JobStatusRunning, 0))
			e.dash.SetError(dashboardtest.OpGetJobInfo, errUnreachable)

			var got []time.Duration
			for i := 0; e.clock.Now().Before(t0.Add(submitterFinishedTimeout)) && i < 10; i++ {
				wait := e.pass(t)
				if diff := cmp.Diff(runningSince(&t0), e.checkState(t)); diff != "" {
					t.Fatalf("failing pass at %v (-want +got):\n%s", e.clock.Now().Sub(t0), diff)
				}
				got = append(got, wait)
				e.clock.Step(wait)
			}
			want := []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 9 * time.Second}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("requeues before the timeout (-want +got):\n%s", diff)
			}

			tc.atTimeout(e)
			got = nil
			for len(got) < 20 {
				wait := e.pass(t)
				if e.job(t).Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
					break
				}
				got = append(got, wait)
				if tc.inGrace != nil && len(got) == 1 {
					tc.inGrace(e)
				}
				e.clock.Step(wait)
			}
			if diff := cmp.Diff(tc.wantGraceRequeues, got); diff != "" {
				t.Fatalf("requeues of the failing passes past the timeout (-want +got):\n%s", diff)
			}
			st := e.job(t).Status
			if st.JobDeploymentStatus != tc.want || st.JobStatus != tc.wantStatus || st.Reason != tc.wantReason {
				t.Fatalf("at %v: %s/%s reason %q (%s); want %s/%s reason %q", e.clock.Now().Sub(t0),
					st.JobDeploymentStatus, st.JobStatus, st.Reason, st.Message, tc.want, tc.wantStatus, tc.wantReason)
			}
			if len(tc.wantGraceRequeues) > 0 && tc.inGrace == nil && !strings.Contains(st.Message, errUnreachable.Error()) {
				t.Fatalf("message %q does not say why the dashboard did not answer", st.Message)
			}
		})
	}
}

// TestSubmitterFinishedTimeoutAsksPastTheCache: with AsyncJobInfoQuery the
// pass at the submitter-finished timeout asks the dashboard itself. The
// cache here never polls (its Start is not run), as when the operator is
// restarted more often than the cache polls: it answers "again" forever.
// Before the recheck the RayJob then stayed Running past the timeout for
// good, whatever Ray said; now a Ray job that succeeded completes it, and a
// dashboard that still fails is asked again until submitterAnswerGrace has
// passed too, then fails it as KubeRay does at the timeout.
func TestSubmitterFinishedTimeoutAsksPastTheCache(t *testing.T) {
	tests := map[string]struct {
		setUp      func(e *testEnv)
		wantState  rayv1.JobDeploymentStatus
		wantStatus rayv1.JobStatus
		wantReason rayv1.JobFailedReason
	}{
		"Ray job succeeded": {
			setUp:     func(e *testEnv) { e.dash.SetJobStatus(testJobID, rayv1.JobStatusSucceeded, "done") },
			wantState: rayv1.JobDeploymentStatusComplete, wantStatus: rayv1.JobStatusSucceeded,
		},
		"dashboard failing": {
			setUp:     func(e *testEnv) { e.dash.SetError(dashboardtest.OpGetJobInfo, errUnreachable) },
			wantState: rayv1.JobDeploymentStatusFailed, wantStatus: rayv1.JobStatusFailed,
			wantReason: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			job := makeJob(mode(rayv1.K8sJobMode), inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusRunning))
			e := newEnv(t, []client.Object{job, makeCluster(rayv1.Ready), headService(), submitterJob(batchv1.JobComplete, t0)})
			e.dash.AddJob(rayJobInfo(rayv1.JobStatusRunning, 0))
			cache := dashboard.NewJobInfoCache(e.clock)
			e.r = New(Deps{Core: managerdeps.Core{Client: e.client, Recorder: e.events, Clock: e.clock}, Dashboards: cache.Provider(e.dash.Provider())}, e.opts)

			e.pass(t)
			if st := e.job(t).Status; st.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
				t.Fatalf("before the timeout: %s (%s), want Running while the cache has no answer", st.JobDeploymentStatus, st.Message)
			}
			tc.setUp(e)
			e.clock.Step(submitterFinishedTimeout)
			for e.pass(t); e.job(t).Status.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning; e.pass(t) {
				if !e.clock.Now().Before(t0.Add(submitterFinishedTimeout + submitterAnswerGrace)) {
					t.Fatalf("still Running at %v, after the answer grace", e.clock.Now().Sub(t0))
				}
				e.clock.Step(time.Second)
			}
			st := e.job(t).Status
			if st.JobDeploymentStatus != tc.wantState || st.JobStatus != tc.wantStatus || st.Reason != tc.wantReason {
				t.Fatalf("at the timeout: %s/%s reason %q (%s); want %s/%s reason %q",
					st.JobDeploymentStatus, st.JobStatus, st.Reason, st.Message, tc.wantState, tc.wantStatus, tc.wantReason)
			}
		})
	}
}
