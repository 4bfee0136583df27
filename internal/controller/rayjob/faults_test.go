package rayjob

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// wantBackoff is the documented requeue after each consecutive dashboard
// failure: 3 s doubling to a 1 minute cap.
var wantBackoff = []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 24 * time.Second,
	48 * time.Second, time.Minute, time.Minute}

// faultModes are the faults of a request; FaultGone (an answer, not a
// failed request) has its own test.
var faultModes = []dashboardtest.Fault{dashboardtest.FaultServerError, dashboardtest.FaultTimeout,
	dashboardtest.FaultRefused, dashboardtest.FaultGarbage, dashboardtest.FaultSlow}

// runningWorld is a Running RayJob in mode whose Ray job is RUNNING, with
// its ready cluster, head Service and (K8sJobMode) running submitter.
func runningWorld(t *testing.T, m rayv1.JobSubmissionMode) *testEnv {
	t.Helper()
	job := makeJob(mode(m), inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusRunning))
	objs := []client.Object{job, makeCluster(rayv1.Ready), headService()}
	if m == rayv1.K8sJobMode {
		objs = append(objs, submitterJob("", t0))
	}
	e := newEnv(t, objs)
	e.dash.AddJob(rayJobInfo(rayv1.JobStatusRunning, 0))
	return e
}

// pass runs one reconcile that must not fail and returns its requeue.
func (e *testEnv) pass(t *testing.T) time.Duration {
	t.Helper()
	res, err := e.reconcile(t)
	if err != nil {
		t.Fatalf("Reconcile error %v; a dashboard fault must not be returned to the rate limiter", err)
	}
	return res.RequeueAfter
}

// TestDashboardFaultsWhileRunning: for each fault of the job info request,
// a Running RayJob stays Running with its last Ray job status, its message
// and a warning event say what failed, and it requeues after a back-off
// that doubles up to a cap (never 0, never an error for controller-
// runtime's rate limiter). A pass that a watch event triggers during the
// back-off does not ask the dashboard. When the dashboard recovers, the
// RayJob takes the Ray job's status again and the back-off starts over.
func TestDashboardFaultsWhileRunning(t *testing.T) {
	for _, m := range []rayv1.JobSubmissionMode{rayv1.K8sJobMode, rayv1.HTTPMode} {
		for _, fault := range faultModes {
			t.Run(fmt.Sprintf("%s %s", m, fault), func(t *testing.T) {
				e := runningWorld(t, m)
				faultErr := e.dash.SetFault(dashboardtest.OpGetJobInfo, fault, testJobID)

				for i, want := range wantBackoff {
					if got := e.pass(t); got != want {
						t.Fatalf("failure %d: requeue after %v, want %v", i+1, got, want)
					}
					job := e.job(t)
					if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || job.Status.JobStatus != rayv1.JobStatusRunning {
						t.Fatalf("failure %d: %s/%s, want Running/RUNNING", i+1, job.Status.JobDeploymentStatus, job.Status.JobStatus)
					}
					wantMsg := fmt.Sprintf("Failed to get Ray job %s from the dashboard: %v (retrying in %s)", testJobID, faultErr, want)
					if job.Status.Message != wantMsg {
						t.Fatalf("failure %d: message %q, want %q", i+1, job.Status.Message, wantMsg)
					}
					if ev := drain(e); !containsPrefix(ev, "Warning FailedToGetRayJobInfo "+wantMsg) {
						t.Fatalf("failure %d: events %q", i+1, ev)
					}
					e.clock.Step(want)
				}

				// One more failure at the cap; then, 1 s before the retry,
				// the dashboard recovers and the Ray job has succeeded. A
				// pass in the back-off (as the status write's watch event
				// brings) still waits and does not look.
				if got := e.pass(t); got != time.Minute {
					t.Fatalf("failure at the cap: requeue %v, want 1m", got)
				}
				e.clock.Step(time.Minute - time.Second)
				e.dash.SetError(dashboardtest.OpGetJobInfo, nil)
				e.dash.SetJobStatus(testJobID, rayv1.JobStatusSucceeded, "done")
				if got := e.pass(t); got != time.Second {
					t.Fatalf("pass inside the back-off: requeue %v, want 1s", got)
				}
				if got := e.job(t).Status.JobStatus; got != rayv1.JobStatusRunning {
					t.Fatalf("pass inside the back-off saw the dashboard: JobStatus %s", got)
				}

				e.clock.Step(time.Second)
				e.pass(t)
				job := e.job(t)
				wantState := rayv1.JobDeploymentStatusComplete
				if m == rayv1.K8sJobMode {
					wantState = rayv1.JobDeploymentStatusRunning // the submitter still runs
				}
				if job.Status.JobDeploymentStatus != wantState || job.Status.JobStatus != rayv1.JobStatusSucceeded || job.Status.Message != "done" {
					t.Fatalf("after recovery: %s/%s %q, want %s/SUCCEEDED \"done\"", job.Status.JobDeploymentStatus,
						job.Status.JobStatus, job.Status.Message, wantState)
				}
				if m == rayv1.K8sJobMode {
					// The back-off starts over after a success.
					e.clock.Step(defaultRequeue)
					if e.dash.SetFault(dashboardtest.OpGetJobInfo, fault, testJobID) == nil {
						t.Fatal("no fault error")
					}
					if got := e.pass(t); got != wantBackoff[0] {
						t.Fatalf("failure after recovery: requeue %v, want %v", got, wantBackoff[0])
					}
				}
			})
		}
	}
}

// TestDashboardJobGone: a Ray job the dashboard no longer knows is
// submitted again in HTTPMode, exactly once; in K8sJobMode it is waited
// for while the submitter runs and fails the RayJob once the submitter has
// finished.
func TestDashboardJobGone(t *testing.T) {
	t.Run("HTTPMode resubmits once", func(t *testing.T) {
		e := runningWorld(t, rayv1.HTTPMode)
		e.dash.ForgetJob(testJobID)
		if got := e.pass(t); got != defaultRequeue {
			t.Fatalf("requeue %v", got)
		}
		e.clock.Step(defaultRequeue)
		if got := e.pass(t); got != defaultRequeue {
			t.Fatalf("requeue %v", got)
		}
		if subs := e.dash.Submissions(); len(subs) != 1 || subs[0].SubmissionID != testJobID {
			t.Fatalf("submissions %+v, want one of %s", subs, testJobID)
		}
		if job := e.job(t); job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || job.Status.JobStatus != rayv1.JobStatusPending {
			t.Errorf("%s/%s, want Running/PENDING", job.Status.JobDeploymentStatus, job.Status.JobStatus)
		}
	})
	t.Run("HTTPMode resubmission meets a 5xx, backs off, then submits", func(t *testing.T) {
		e := runningWorld(t, rayv1.HTTPMode)
		e.dash.ForgetJob(testJobID)
		submitErr := e.dash.SetFault(dashboardtest.OpSubmitJob, dashboardtest.FaultServerError, testJobID)
		for i, want := range wantBackoff[:3] {
			if got := e.pass(t); got != want {
				t.Fatalf("failure %d: requeue %v, want %v", i+1, got, want)
			}
			job := e.job(t)
			wantMsg := fmt.Sprintf("Failed to submit Ray job %s: %v (retrying in %s)", testJobID, submitErr, want)
			if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || job.Status.Message != wantMsg {
				t.Fatalf("failure %d: %s %q, want Running %q", i+1, job.Status.JobDeploymentStatus, job.Status.Message, wantMsg)
			}
			if ev := drain(e); !containsPrefix(ev, "Warning FailedToSubmitRayJob Failed to submit Ray job "+testJobID+": ray dashboard POST /api/jobs/: 500") {
				t.Fatalf("failure %d: events %q", i+1, ev)
			}
			e.clock.Step(want)
		}
		e.dash.SetError(dashboardtest.OpSubmitJob, nil)
		if got := e.pass(t); got != defaultRequeue {
			t.Fatalf("after recovery: requeue %v", got)
		}
		jobs, err := e.dash.ListJobs(t.Context())
		if err != nil || len(jobs) != 1 || jobs[0].SubmissionID != testJobID {
			t.Fatalf("jobs on the dashboard %+v (%v), want exactly %s", jobs, err, testJobID)
		}
	})
	t.Run("K8sJobMode, submitter running: waits", func(t *testing.T) {
		e := runningWorld(t, rayv1.K8sJobMode)
		e.dash.ForgetJob(testJobID)
		for range 3 {
			if got := e.pass(t); got != defaultRequeue {
				t.Fatalf("requeue %v, want %v", got, defaultRequeue)
			}
			e.clock.Step(defaultRequeue)
		}
		if job := e.job(t); job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
			t.Errorf("%s, want Running", job.Status.JobDeploymentStatus)
		}
		if n := len(e.dash.Submissions()); n != 0 {
			t.Errorf("%d submissions by the controller in K8sJobMode", n)
		}
	})
	t.Run("K8sJobMode, submitter finished: Failed", func(t *testing.T) {
		job := makeJob(inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusRunning))
		e := newEnv(t, []client.Object{job, makeCluster(rayv1.Ready), headService(), submitterJob("Complete", t0)})
		e.pass(t)
		got := e.job(t)
		if got.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || got.Status.Reason != rayv1.AppFailed ||
			!strings.Contains(got.Status.Message, "Ray job not found") {
			t.Errorf("%s %s %q, want Failed AppFailed, job not found", got.Status.JobDeploymentStatus, got.Status.Reason, got.Status.Message)
		}
	})
}

// TestDashboardFaultsOnDeletion: whatever the fault, deleting a RayJob
// removes its finalizer and a warning event names what failed.
func TestDashboardFaultsOnDeletion(t *testing.T) {
	for _, fault := range dashboardtest.Faults {
		t.Run(string(fault), func(t *testing.T) {
			e := runningWorld(t, rayv1.HTTPMode)
			stopErr := e.dash.SetFault(dashboardtest.OpStopJob, fault, testJobID)
			if err := e.client.Delete(t.Context(), e.job(t)); err != nil {
				t.Fatal(err)
			}
			if got := e.pass(t); got != 0 {
				t.Errorf("requeue %v after the finalizer", got)
			}
			if job := e.job(t); job != nil {
				t.Fatalf("RayJob still there with finalizers %v", job.Finalizers)
			}
			if ev := drain(e); !containsPrefix(ev, fmt.Sprintf("Warning FailedToStopRayJob Failed to stop Ray job %s: %v", testJobID, stopErr)) {
				t.Errorf("events %q", ev)
			}
		})
	}
}

// staleCache answers every job info request "not found", as the job info
// cache does with an answer polled before the submission; its Uncached side
// is the dashboard itself.
type staleCache struct{ dashboard.Client }

func (staleCache) GetJobInfo(context.Context, string) (*dashboard.JobInfo, error) {
	return nil, dashboard.ErrNotFound
}

func (s staleCache) Uncached() dashboard.Client { return s.Client }

// TestStaleNotFoundDoesNotFailTheRayJob: with the submitter finished and the
// cache saying "not found", the dashboard itself is asked before the RayJob
// fails; it knows the job, so the RayJob completes on a later pass instead.
func TestStaleNotFoundDoesNotFailTheRayJob(t *testing.T) {
	e := newEnv(t, append([]client.Object{makeJob(inState(rayv1.JobDeploymentStatusRunning))}, running(batchv1.JobComplete)...))
	withRayJob(rayv1.JobStatusSucceeded)(e)
	inner := e.dash.Provider()
	stale := func(url, token string) (dashboard.Client, error) {
		c, err := inner(url, token)
		return staleCache{c}, err
	}
	e.r = New(Deps{Core: managerdeps.Core{Client: e.client, Recorder: e.events, Clock: e.clock}, Dashboards: stale}, e.opts)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if job := e.job(t); job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
		t.Errorf("status %q reason %q (%s), want Running: the dashboard knows the job", job.Status.JobDeploymentStatus, job.Status.Reason, job.Status.Message)
	}

	// The dashboard itself does not know it either: now the RayJob fails.
	e.dash.ForgetJob(testJobID)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if job := e.job(t); job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || job.Status.Reason != rayv1.AppFailed {
		t.Errorf("status %q reason %q, want Failed AppFailed", job.Status.JobDeploymentStatus, job.Status.Reason)
	}
}
