package rayjob

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// failedSubmitter is a Running RayJob whose submitter failed in one of the
// ways that end a RayJob from the submitter alone, and the message of
// SubmissionFailed it leads to.
type failedSubmitter struct {
	job     func(opts ...jobOption) *rayv1.RayJob
	objs    []client.Object
	env     []envOption
	message string
}

// failedSubmitters are the K8sJobMode Job that failed, the SidecarMode
// container that exited 1, and the SidecarSubmitterRestart container that
// used up its restarts.
func failedSubmitters() map[string]failedSubmitter {
	running := func(m rayv1.JobSubmissionMode) func(opts ...jobOption) *rayv1.RayJob {
		return func(opts ...jobOption) *rayv1.RayJob {
			return makeJob(append([]jobOption{mode(m), inState(rayv1.JobDeploymentStatusRunning)}, opts...)...)
		}
	}
	cluster := []client.Object{makeCluster(rayv1.Ready), headService()}
	return map[string]failedSubmitter{
		"K8sJobMode Job failed": {
			job: running(rayv1.K8sJobMode), objs: append(cluster, submitterJob(batchv1.JobFailed, t0)),
			message: "Job submission has failed. Reason: BackoffLimitExceeded. Message: failed 3 times",
		},
		"SidecarMode container exited 1": {
			job: running(rayv1.SidecarMode), objs: append(cluster, headPod(exited(1))),
			message: "Ray head pod container ray-job-submitter terminated with exit code 1: Error",
		},
		"SidecarSubmitterRestart restarts used up": {
			job: running(rayv1.SidecarMode), env: []envOption{withGate(string(features.SidecarSubmitterRestart), true)},
			objs: append(cluster, restartingHead(corev1.ContainerStatus{RestartCount: 2,
				State:                corev1.ContainerState{Terminated: exited(1)},
				LastTerminationState: corev1.ContainerState{Terminated: exited(1)}})),
			message: "Ray head pod submitter container ray-job-submitter terminated after exceeding the maximum restart count",
		},
	}
}

// wantStatus checks the Ray job status and message a pass left.
func wantStatus(jobStatus rayv1.JobStatus, message string) func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
	return func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
		t.Helper()
		if job.Status.JobStatus != jobStatus || job.Status.Message != message {
			t.Errorf("jobStatus %q message %q, want %q %q", job.Status.JobStatus, job.Status.Message, jobStatus, message)
		}
	}
}

// TestFailedSubmitterAsksTheDashboard (issue #53): a submitter that failed
// while the RayJob has not seen its Ray job end does not fail the RayJob
// on its own. The dashboard is asked: a Ray job that failed is AppFailed
// with jobStatus FAILED and Ray's message and times, one that succeeded
// completes the RayJob, and only a Ray job unknown to the dashboard, or
// still running, is SubmissionFailed. A Ray job status already terminal
// (KubeRay's order of events) is decided as KubeRay does.
func TestFailedSubmitterAsksTheDashboard(t *testing.T) {
	for name, sub := range failedSubmitters() {
		t.Run(name, func(t *testing.T) {
			runTransitions(t, map[string]transitionCase{
				"Ray job failed: AppFailed with Ray's status, message and times": {
					job: sub.job(), objs: sub.objs, env: sub.env, setup: withRayJob(rayv1.JobStatusFailed),
					wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
					check: func(t *testing.T, e *testEnv, job *rayv1.RayJob) {
						wantStatus(rayv1.JobStatusFailed, "msg FAILED")(t, e, job)
						info := job.Status.RayJobStatusInfo
						if info.StartTime == nil || !info.StartTime.Time.Equal(t0) || info.EndTime == nil || !info.EndTime.Time.Equal(t0) {
							t.Errorf("Ray job times %+v, want both %v", info, t0)
						}
					},
				},
				"Ray job succeeded: Complete": {
					job: sub.job(), objs: sub.objs, env: sub.env, setup: withRayJob(rayv1.JobStatusSucceeded),
					wantState: rayv1.JobDeploymentStatusComplete,
					check:     wantStatus(rayv1.JobStatusSucceeded, "msg SUCCEEDED"),
				},
				"Ray job stopped: Complete": {
					job: sub.job(), objs: sub.objs, env: sub.env, setup: withRayJob(rayv1.JobStatusStopped),
					wantState: rayv1.JobDeploymentStatusComplete,
					check:     wantStatus(rayv1.JobStatusStopped, "msg STOPPED"),
				},
				"Ray job unknown to the dashboard: SubmissionFailed": {
					job: sub.job(), objs: sub.objs, env: sub.env,
					wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.SubmissionFailed,
					check: wantStatus("", sub.message),
				},
				"Ray job still running: SubmissionFailed": {
					job: sub.job(), objs: sub.objs, env: sub.env, setup: withRayJob(rayv1.JobStatusRunning),
					wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.SubmissionFailed,
					check: wantStatus(rayv1.JobStatusRunning, sub.message),
				},
				"Ray job seen FAILED by an earlier pass: AppFailed, its message kept (KubeRay)": {
					job:  sub.job(jobStatus(rayv1.JobStatusFailed), func(j *rayv1.RayJob) { j.Status.Message = "earlier" }),
					objs: sub.objs, env: sub.env, setup: withRayJob(rayv1.JobStatusFailed),
					wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
					check: wantStatus(rayv1.JobStatusFailed, "earlier"),
				},
				"Ray job seen SUCCEEDED by an earlier pass: SubmissionFailed (KubeRay)": {
					job:  sub.job(jobStatus(rayv1.JobStatusSucceeded)),
					objs: sub.objs, env: sub.env, setup: withRayJob(rayv1.JobStatusSucceeded),
					wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.SubmissionFailed,
					check: wantStatus(rayv1.JobStatusSucceeded, sub.message),
				},
			})
		})
	}
}

// TestFailedSubmitterDashboardFailing: when the dashboard fails to answer
// about the Ray job of a failed submitter, the RayJob stays Running and
// the request is retried as Running retries it (back-off, message), until
// an answer decides or the status check timeout has passed: then it is
// SubmissionFailed, the message saying that the Ray job's status is
// unknown.
func TestFailedSubmitterDashboardFailing(t *testing.T) {
	for name, sub := range failedSubmitters() {
		t.Run(name, func(t *testing.T) {
			for _, recovers := range []bool{true, false} {
				t.Run(map[bool]string{true: "the dashboard answers: AppFailed", false: "it never does: SubmissionFailed"}[recovers], func(t *testing.T) {
					e := newEnv(t, append([]client.Object{sub.job()}, sub.objs...), sub.env...)
					e.dash.AddJob(rayJobInfo(rayv1.JobStatusFailed, uint64(t0.UnixMilli())))
					e.dash.SetError(dashboardtest.OpGetJobInfo, errUnreachable)
					if wait := e.pass(t); wait != 3*time.Second {
						t.Fatalf("requeue after %v, want the dashboard's first back-off, 3s", wait)
					}
					st := e.job(t).Status
					if want := "Failed to get Ray job job-id from the dashboard: dial tcp: connection refused (retrying in 3s)"; st.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || st.Message != want {
						t.Fatalf("after a failed request: %s %q, want Running %q", st.JobDeploymentStatus, st.Message, want)
					}
					for wait := 3 * time.Second; e.job(t).Status.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning; wait = e.pass(t) {
						if now := e.clock.Now(); now.After(t0.Add(e.r.opts.StatusCheckTimeout)) {
							t.Fatalf("still Running at %v, past the status check timeout", now.Sub(t0))
						}
						e.clock.Step(wait)
						if recovers && e.clock.Now().Sub(t0) >= time.Minute {
							e.dash.SetError(dashboardtest.OpGetJobInfo, nil)
						}
					}
					st = e.job(t).Status
					if recovers {
						if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != rayv1.AppFailed ||
							st.JobStatus != rayv1.JobStatusFailed || st.Message != "msg FAILED" || st.JobStatusCheckFailureStartTime != nil {
							t.Fatalf("%s %s/%s %q, check failure start %v; want Failed AppFailed/FAILED %q, none",
								st.JobDeploymentStatus, st.Reason, st.JobStatus, st.Message, st.JobStatusCheckFailureStartTime, "msg FAILED")
						}
						return
					}
					if !e.clock.Now().Equal(t0.Add(e.r.opts.StatusCheckTimeout)) {
						t.Errorf("ended at %v, want at the status check timeout %v", e.clock.Now().Sub(t0), e.r.opts.StatusCheckTimeout)
					}
					wantMsg := sub.message + "; the Ray job's status is unknown: Job status checks have been failing since 2026-01-01 00:00:00; exceeded timeout of 300s"
					if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != rayv1.SubmissionFailed || st.JobStatus != "" || st.Message != wantMsg {
						t.Fatalf("%s %s/%q %q; want Failed SubmissionFailed, no jobStatus, %q", st.JobDeploymentStatus, st.Reason, st.JobStatus, st.Message, wantMsg)
					}
				})
			}
		})
	}
}

// TestFailedSubmitterAsksPastTheCache: with AsyncJobInfoQuery the failed
// submitter's Ray job is asked about past the job info cache, whose first
// answer is always "again" (here it never polls: its Start is not run).
func TestFailedSubmitterAsksPastTheCache(t *testing.T) {
	for name, sub := range failedSubmitters() {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, append([]client.Object{sub.job()}, sub.objs...), sub.env...)
			e.dash.AddJob(rayJobInfo(rayv1.JobStatusFailed, uint64(t0.UnixMilli())))
			cache := dashboard.NewJobInfoCache(e.clock)
			e.r = New(Deps{Core: managerdeps.Core{Client: e.client, Recorder: e.events, Clock: e.clock}, Dashboards: cache.Provider(e.dash.Provider())}, e.opts)
			e.pass(t)
			if st := e.job(t).Status; st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != rayv1.AppFailed ||
				st.JobStatus != rayv1.JobStatusFailed || !strings.HasPrefix(st.Message, "msg") {
				t.Fatalf("%s %s/%s %q; want Failed AppFailed/FAILED with Ray's message", st.JobDeploymentStatus, st.Reason, st.JobStatus, st.Message)
			}
		})
	}
}
