package rayjob

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// transitionCase is one pass of the state machine: a RayJob in some state
// and the world around it, what the pass must lead to.
type transitionCase struct {
	job        *rayv1.RayJob
	objs       []client.Object
	setup      func(e *testEnv)
	wantState  rayv1.JobDeploymentStatus
	wantReason rayv1.JobFailedReason
	wantErr    bool
	check      func(t *testing.T, e *testEnv, job *rayv1.RayJob)
	// env sets the controller's options (feature gates).
	env []envOption
}

// runTransitions runs each case once through Reconcile.
func runTransitions(t *testing.T, cases map[string]transitionCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, append([]client.Object{tc.job}, tc.objs...), tc.env...)
			if tc.setup != nil {
				tc.setup(e)
			}
			_, err := e.reconcile(t)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Reconcile error %v, want error %v", err, tc.wantErr)
			}
			job := e.job(t)
			if job.Status.JobDeploymentStatus != tc.wantState || job.Status.Reason != tc.wantReason {
				t.Errorf("status %q reason %q (%s), want %q reason %q", job.Status.JobDeploymentStatus,
					job.Status.Reason, job.Status.Message, tc.wantState, tc.wantReason)
			}
			if tc.check != nil {
				tc.check(t, e, job)
			}
		})
	}
}

// TestNewToInitializing covers New -> Initializing (initRayJobStatusIfNeed).
func TestNewToInitializing(t *testing.T) {
	runTransitions(t, map[string]transitionCase{
		"generates the job id and cluster name, adds the finalizer, starts the clock": {
			job:       makeJob(),
			wantState: rayv1.JobDeploymentStatusInitializing,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if !strings.HasPrefix(job.Status.JobID, "job-") || len(job.Status.JobID) != len("job-")+5 {
					t.Errorf("job id %q, want job-xxxxx", job.Status.JobID)
				}
				if !strings.HasPrefix(job.Status.RayClusterName, "job-") || job.Status.RayClusterName == job.Status.JobID {
					t.Errorf("cluster name %q", job.Status.RayClusterName)
				}
				if diff := cmp.Diff([]string{rayv1.RayJobStopJobFinalizer}, job.Finalizers); diff != "" {
					t.Errorf("finalizers (-want +got):\n%s", diff)
				}
				if !job.Status.StartTime.Time.Equal(t0) || job.Status.JobStatus != rayv1.JobStatusNew {
					t.Errorf("start time %v job status %q", job.Status.StartTime, job.Status.JobStatus)
				}
				if *job.Status.Failed != 0 || *job.Status.Succeeded != 0 {
					t.Errorf("counters %d/%d, want 0/0", *job.Status.Failed, *job.Status.Succeeded)
				}
			},
		},
		"takes the job id from the spec and the cluster from the selector": {
			job: makeJob(func(j *rayv1.RayJob) {
				j.Spec.JobID = "my-id"
				j.Spec.RayClusterSpec = nil
				j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "shared"}
			}),
			wantState: rayv1.JobDeploymentStatusInitializing,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if job.Status.JobID != "my-id" || job.Status.RayClusterName != "shared" {
					t.Errorf("job id %q cluster %q, want my-id shared", job.Status.JobID, job.Status.RayClusterName)
				}
			},
		},
		"InteractiveMode leaves the job id to the user": {
			job:       makeJob(mode(rayv1.InteractiveMode)),
			wantState: rayv1.JobDeploymentStatusInitializing,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if job.Status.JobID != "" {
					t.Errorf("job id %q, want none", job.Status.JobID)
				}
			},
		},
	})
}

// TestInitializing covers Initializing -> Running, Waiting, Suspending and
// Failed, and waiting for the cluster.
func TestInitializing(t *testing.T) {
	runTransitions(t, map[string]transitionCase{
		"creates the cluster and waits for it to be ready": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusInitializing)),
			wantState: rayv1.JobDeploymentStatusInitializing,
			check: func(t *testing.T, e *testEnv, job *rayv1.RayJob) {
				cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster, Namespace: testNS}}
				if !e.exists(t, cluster) {
					t.Fatal("no RayCluster created")
				}
				wantLabels := map[string]string{"team": "a", "ray.io/originated-from-cr-name": "job",
					"ray.io/originated-from-crd": "RayJob", rayv1.LabelJobSubmissionMode: "K8sJobMode"}
				if diff := cmp.Diff(wantLabels, cluster.Labels); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(map[string]string{"note": "x"}, cluster.Annotations); diff != "" {
					t.Errorf("annotations (-want +got):\n%s", diff)
				}
				if ref := metav1.GetControllerOf(cluster); ref == nil || ref.Kind != "RayJob" || ref.Name != "job" {
					t.Errorf("controller reference %v", ref)
				}
				if diff := cmp.Diff(*makeJob().Spec.RayClusterSpec, cluster.Spec); diff != "" {
					t.Errorf("spec (-want +got):\n%s", diff)
				}
				if job.Status.DashboardURL != "" {
					t.Errorf("dashboard URL %q before the cluster is ready", job.Status.DashboardURL)
				}
			},
		},
		"copies the cluster status while waiting": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusInitializing)),
			objs:      []client.Object{makeCluster("")},
			wantState: rayv1.JobDeploymentStatusInitializing,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if job.Status.RayClusterStatus.State != "" {
					t.Errorf("cluster state %q", job.Status.RayClusterStatus.State)
				}
			},
		},
		"ready cluster: records the dashboard URL, creates the submitter Job, runs": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusInitializing)),
			objs:      []client.Object{makeCluster(rayv1.Ready), headService()},
			wantState: rayv1.JobDeploymentStatusRunning,
			check: func(t *testing.T, e *testEnv, job *rayv1.RayJob) {
				if job.Status.DashboardURL != testURL {
					t.Errorf("dashboard URL %q, want %q", job.Status.DashboardURL, testURL)
				}
				submitter := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: testJobName, Namespace: testNS}}
				if !e.exists(t, submitter) {
					t.Fatal("no submitter Job")
				}
				if ref := metav1.GetControllerOf(submitter); ref == nil || ref.Name != "job" {
					t.Errorf("controller reference %v", ref)
				}
				if !strings.Contains(submitter.Spec.Template.Spec.Containers[0].Args[0], "--submission-id job-id") {
					t.Errorf("args %q", submitter.Spec.Template.Spec.Containers[0].Args)
				}
			},
		},
		"HTTPMode runs without a submitter Job": {
			job:       makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusInitializing)),
			objs:      []client.Object{makeCluster(rayv1.Ready), headService()},
			wantState: rayv1.JobDeploymentStatusRunning,
			check: func(t *testing.T, e *testEnv, _ *rayv1.RayJob) {
				if e.exists(t, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: testJobName, Namespace: testNS}}) {
					t.Error("HTTPMode created a submitter Job")
				}
			},
		},
		"InteractiveMode waits for the user": {
			job:       makeJob(mode(rayv1.InteractiveMode), inState(rayv1.JobDeploymentStatusInitializing)),
			objs:      []client.Object{makeCluster(rayv1.Ready), headService()},
			wantState: rayv1.JobDeploymentStatusWaiting,
		},
		"SidecarMode puts the submitter into the head Pod": {
			job:       makeJob(mode(rayv1.SidecarMode), inState(rayv1.JobDeploymentStatusInitializing)),
			wantState: rayv1.JobDeploymentStatusInitializing,
			check: func(t *testing.T, e *testEnv, _ *rayv1.RayJob) {
				cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster, Namespace: testNS}}
				if !e.exists(t, cluster) {
					t.Fatal("no RayCluster")
				}
				pod := cluster.Spec.HeadGroupSpec.Template.Spec
				if len(pod.Containers) != 2 || pod.Containers[1].Name != "ray-job-submitter" || pod.RestartPolicy != corev1.RestartPolicyNever {
					t.Fatalf("head pod spec: %d containers, restart policy %q", len(pod.Containers), pod.RestartPolicy)
				}
				if sub := pod.Containers[1]; sub.RestartPolicy != nil || strings.Contains(sub.Args[0], "ray job status") {
					t.Errorf("without SidecarSubmitterRestart: submitter restartPolicy %v args %q", sub.RestartPolicy, sub.Args[0])
				}
				if cluster.Annotations[rayv1.AnnotationDisableProvisionedHeadRestart] != "true" || cluster.Labels[rayv1.LabelJobSubmissionMode] != "SidecarMode" {
					t.Errorf("annotations %v labels %v", cluster.Annotations, cluster.Labels)
				}
			},
		},
		"SidecarMode: the submitter ended before the cluster was ready: runs": {
			// The head Pod is not Ready once its submitter container exited,
			// so the cluster never will be; Running reads how it ended.
			job: makeJob(mode(rayv1.SidecarMode), inState(rayv1.JobDeploymentStatusInitializing)),
			objs: []client.Object{makeCluster(""), headService(),
				headPod(&corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.Time{Time: t0}})},
			wantState: rayv1.JobDeploymentStatusRunning,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if job.Status.DashboardURL != testURL {
					t.Errorf("dashboard URL %q, want %q", job.Status.DashboardURL, testURL)
				}
			},
		},
		"SidecarMode: the submitter runs and the cluster is not ready: waits": {
			job:       makeJob(mode(rayv1.SidecarMode), inState(rayv1.JobDeploymentStatusInitializing)),
			objs:      []client.Object{makeCluster(""), headService(), headPod(nil)},
			wantState: rayv1.JobDeploymentStatusInitializing,
		},
		"suspend moves to Suspending": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusInitializing), func(j *rayv1.RayJob) { j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true }),
			wantState: rayv1.JobDeploymentStatusSuspending,
		},
		"activeDeadlineSeconds fails it, never retried": {
			job: makeJob(inState(rayv1.JobDeploymentStatusInitializing), func(j *rayv1.RayJob) {
				j.Spec.ActiveDeadlineSeconds = ptr.To[int32](10)
				j.Spec.BackoffLimit = ptr.To[int32](3)
			}),
			setup:      func(e *testEnv) { e.clock.Step(10 * time.Second) },
			wantState:  rayv1.JobDeploymentStatusFailed,
			wantReason: rayv1.DeadlineExceeded,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if *job.Status.Failed != 1 || !job.Status.EndTime.Time.Equal(t0.Add(10*time.Second)) {
					t.Errorf("failed %d end time %v", *job.Status.Failed, job.Status.EndTime)
				}
			},
		},
		"before activeDeadlineSeconds it goes on": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusInitializing), func(j *rayv1.RayJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int32](10) }),
			setup:     func(e *testEnv) { e.clock.Step(9 * time.Second) },
			wantState: rayv1.JobDeploymentStatusInitializing,
		},
		"preRunningDeadlineSeconds fails it": {
			job:        makeJob(inState(rayv1.JobDeploymentStatusInitializing), func(j *rayv1.RayJob) { j.Spec.PreRunningDeadlineSeconds = ptr.To[int32](60) }),
			setup:      func(e *testEnv) { e.clock.Step(time.Minute) },
			wantState:  rayv1.JobDeploymentStatusFailed,
			wantReason: rayv1.PreRunningDeadlineExceeded,
		},
		"a missing selected cluster is an error, not a creation": {
			job: makeJob(inState(rayv1.JobDeploymentStatusInitializing), func(j *rayv1.RayJob) {
				j.Spec.RayClusterSpec = nil
				j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": testCluster}
			}),
			wantErr:   true,
			wantState: rayv1.JobDeploymentStatusInitializing,
			check: func(t *testing.T, e *testEnv, _ *rayv1.RayJob) {
				if e.exists(t, &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster, Namespace: testNS}}) {
					t.Error("created the selected cluster")
				}
			},
		},
	})
}

// TestWaiting covers Waiting -> Running.
func TestWaiting(t *testing.T) {
	runTransitions(t, map[string]transitionCase{
		"stays until spec.jobId is set": {
			job:       makeJob(mode(rayv1.InteractiveMode), inState(rayv1.JobDeploymentStatusWaiting), func(j *rayv1.RayJob) { j.Status.JobID = "" }),
			wantState: rayv1.JobDeploymentStatusWaiting,
		},
		"suspend and activeDeadlineSeconds wait for Running, as in KubeRay": {
			job: makeJob(mode(rayv1.InteractiveMode), inState(rayv1.JobDeploymentStatusWaiting), func(j *rayv1.RayJob) {
				j.Status.JobID = ""
				j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true
				j.Spec.ActiveDeadlineSeconds = ptr.To[int32](10)
			}),
			setup:     func(e *testEnv) { e.clock.Step(time.Hour) },
			wantState: rayv1.JobDeploymentStatusWaiting,
		},
		"preRunningDeadlineSeconds fails a Waiting RayJob": {
			job: makeJob(mode(rayv1.InteractiveMode), inState(rayv1.JobDeploymentStatusWaiting), func(j *rayv1.RayJob) {
				j.Status.JobID = ""
				j.Spec.PreRunningDeadlineSeconds = ptr.To[int32](10)
			}),
			setup:     func(e *testEnv) { e.clock.Step(10 * time.Second) },
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.PreRunningDeadlineExceeded,
		},
		"runs with the user's job id": {
			job: makeJob(mode(rayv1.InteractiveMode), inState(rayv1.JobDeploymentStatusWaiting), func(j *rayv1.RayJob) {
				j.Status.JobID = ""
				j.Spec.JobID = "users-id"
			}),
			wantState: rayv1.JobDeploymentStatusRunning,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if job.Status.JobID != "users-id" {
					t.Errorf("job id %q", job.Status.JobID)
				}
			},
		},
	})
}

// running returns the objects of a Running K8sJobMode RayJob whose
// submitter Job has condition (none while it runs).
func running(condition batchv1.JobConditionType) []client.Object {
	return []client.Object{makeCluster(rayv1.Ready), headService(), submitterJob(condition, t0)}
}

// withRayJob puts a job of the given status on the fake dashboard.
func withRayJob(status rayv1.JobStatus) func(e *testEnv) {
	return func(e *testEnv) { e.dash.AddJob(rayJobInfo(status, uint64(t0.UnixMilli()))) }
}

// TestRunning covers Running -> Complete, Failed, Suspending, Retrying and
// staying Running.
func TestRunning(t *testing.T) {
	runTransitions(t, map[string]transitionCase{
		"Ray job running: stays Running with the job status and the head Service": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(""), setup: withRayJob(rayv1.JobStatusRunning),
			wantState: rayv1.JobDeploymentStatusRunning,
			check: func(t *testing.T, e *testEnv, job *rayv1.RayJob) {
				if job.Status.JobStatus != rayv1.JobStatusRunning || job.Status.RayClusterStatus.State != rayv1.Ready {
					t.Errorf("job status %q cluster state %q", job.Status.JobStatus, job.Status.RayClusterStatus.State)
				}
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "job-head-svc", Namespace: testNS}}
				if !e.exists(t, svc) || svc.Spec.Selector[rayv1.LabelCluster] != testCluster || svc.Labels[rayv1.LabelOriginatedFromCRName] != "job" {
					t.Errorf("RayJob head Service %+v", svc)
				}
			},
		},
		"Ray job succeeded but the submitter still runs: stays Running": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(""), setup: withRayJob(rayv1.JobStatusSucceeded),
			wantState: rayv1.JobDeploymentStatusRunning,
		},
		"Ray job succeeded and the submitter completed: Complete": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(batchv1.JobComplete), setup: withRayJob(rayv1.JobStatusSucceeded),
			wantState: rayv1.JobDeploymentStatusComplete,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if *job.Status.Succeeded != 1 || *job.Status.Failed != 0 || !job.Status.EndTime.Time.Equal(t0) {
					t.Errorf("succeeded %d failed %d end %v", *job.Status.Succeeded, *job.Status.Failed, job.Status.EndTime)
				}
				if job.Status.RayJobStatusInfo.StartTime == nil || job.Status.RayJobStatusInfo.EndTime == nil {
					t.Errorf("ray job times %+v", job.Status.RayJobStatusInfo)
				}
			},
		},
		// KubeRay: SubmissionFailed; here the dashboard is asked first
		// (endFailedSubmission, issue #53).
		"Ray job failed and the submitter Job failed, seen together: AppFailed": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(batchv1.JobFailed), setup: withRayJob(rayv1.JobStatusFailed),
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
		},
		"Ray job failed, seen before the submitter failed: AppFailed": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusFailed)),
			objs:      running(batchv1.JobFailed),
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
		},
		"Ray job failed with the submitter completed: Failed AppFailed": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(batchv1.JobComplete), setup: withRayJob(rayv1.JobStatusFailed),
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
		},
		"submitter Job failed: Failed SubmissionFailed": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(batchv1.JobFailed),
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.SubmissionFailed,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if !strings.Contains(job.Status.Message, "BackoffLimitExceeded") {
					t.Errorf("message %q", job.Status.Message)
				}
			},
		},
		"failure with backoffLimit left: Retrying, counting the failure": {
			job:  makeJob(inState(rayv1.JobDeploymentStatusRunning), func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }),
			objs: running(batchv1.JobComplete), setup: withRayJob(rayv1.JobStatusFailed),
			wantState: rayv1.JobDeploymentStatusRetrying, wantReason: rayv1.AppFailed,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if *job.Status.Failed != 1 || job.Status.EndTime != nil {
					t.Errorf("failed %d end time %v", *job.Status.Failed, job.Status.EndTime)
				}
			},
		},
		"failure with the backoffLimit used up: Failed": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning), func(j *rayv1.RayJob) {
				j.Spec.BackoffLimit = ptr.To[int32](1)
				j.Status.Failed = ptr.To[int32](1)
			}),
			objs: running(batchv1.JobComplete), setup: withRayJob(rayv1.JobStatusFailed),
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if *job.Status.Failed != 2 {
					t.Errorf("failed %d, want 2", *job.Status.Failed)
				}
			},
		},
		"suspend moves to Suspending": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusRunning), func(j *rayv1.RayJob) { j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true }),
			objs:      running(""),
			wantState: rayv1.JobDeploymentStatusSuspending,
		},
		"activeDeadlineSeconds: Failed DeadlineExceeded": {
			job:   makeJob(inState(rayv1.JobDeploymentStatusRunning), func(j *rayv1.RayJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int32](5) }),
			objs:  running(""),
			setup: func(e *testEnv) { e.clock.Step(5 * time.Second) }, wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.DeadlineExceeded,
		},
		"Ray job ended longer than the grace period ago: Complete": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusSucceeded), func(j *rayv1.RayJob) {
				j.Status.RayJobStatusInfo.EndTime = &metav1.Time{Time: t0}
			}),
			objs:      running(""),
			setup:     func(e *testEnv) { e.clock.Step(300 * time.Second) },
			wantState: rayv1.JobDeploymentStatusComplete, wantReason: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded,
		},
		"Ray job failed longer than the grace period ago: Failed": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusFailed), func(j *rayv1.RayJob) {
				j.Status.RayJobStatusInfo.EndTime = &metav1.Time{Time: t0}
			}),
			objs:      running(""),
			setup:     func(e *testEnv) { e.clock.Step(301 * time.Second) },
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded,
		},
		"submitter finished 30s ago and the Ray job is still running: Failed": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(batchv1.JobComplete),
			setup: func(e *testEnv) {
				withRayJob(rayv1.JobStatusRunning)(e)
				e.clock.Step(30 * time.Second)
			},
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if job.Status.JobStatus != rayv1.JobStatusFailed {
					t.Errorf("job status %q", job.Status.JobStatus)
				}
			},
		},
		"submitter finished 40s ago but the Ray job succeeded: Complete, not failed by the timeout": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(batchv1.JobComplete),
			setup: func(e *testEnv) {
				withRayJob(rayv1.JobStatusSucceeded)(e)
				e.clock.Step(40 * time.Second)
			},
			wantState: rayv1.JobDeploymentStatusComplete,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if job.Status.JobStatus != rayv1.JobStatusSucceeded {
					t.Errorf("job status %q", job.Status.JobStatus)
				}
			},
		},
		"submitter finished 29s ago: still Running": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(batchv1.JobComplete),
			setup: func(e *testEnv) {
				withRayJob(rayv1.JobStatusRunning)(e)
				e.clock.Step(29 * time.Second)
			},
			wantState: rayv1.JobDeploymentStatusRunning,
		},
		"submitter finished but Ray does not know the job: Failed AppFailed": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(batchv1.JobComplete),
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
		},
		"dashboard not answering yet (ErrAgain): stays Running": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(""),
			setup:     func(e *testEnv) { e.dash.SetError(dashboardtest.OpGetJobInfo, dashboard.ErrAgain) },
			wantState: rayv1.JobDeploymentStatusRunning,
		},
		"dashboard error: stays Running, says so, backs off": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRunning)), objs: running(""),
			setup:     func(e *testEnv) { e.dash.SetError(dashboardtest.OpGetJobInfo, errors.New("boom")) },
			wantState: rayv1.JobDeploymentStatusRunning,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if want := "Failed to get Ray job job-id from the dashboard: boom (retrying in 3s)"; job.Status.Message != want {
					t.Errorf("message %q, want %q", job.Status.Message, want)
				}
			},
		},
		"HTTPMode submits a job Ray does not know": {
			job:       makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusRunning)),
			objs:      []client.Object{makeCluster(rayv1.Ready), headService()},
			wantState: rayv1.JobDeploymentStatusRunning,
			check: func(t *testing.T, e *testEnv, _ *rayv1.RayJob) {
				subs := e.dash.Submissions()
				if len(subs) != 1 || subs[0].SubmissionID != testJobID || subs[0].Entrypoint != "python main.py" {
					t.Errorf("submissions %+v", subs)
				}
				if urls, _ := e.dash.ProvidedFor(); len(urls) == 0 || urls[0] != testURL {
					t.Errorf("dashboard URLs %v", urls)
				}
			},
		},
		"HTTPMode does not submit a known job again": {
			job: makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusRunning)), objs: []client.Object{makeCluster(rayv1.Ready), headService()},
			setup: withRayJob(rayv1.JobStatusSucceeded), wantState: rayv1.JobDeploymentStatusComplete,
			check: func(t *testing.T, e *testEnv, _ *rayv1.RayJob) {
				if n := len(e.dash.Submissions()); n != 0 {
					t.Errorf("%d submissions", n)
				}
			},
		},
		"InteractiveMode completes on the Ray job alone": {
			job: makeJob(mode(rayv1.InteractiveMode), inState(rayv1.JobDeploymentStatusRunning)), objs: []client.Object{makeCluster(rayv1.Ready), headService()},
			setup: withRayJob(rayv1.JobStatusStopped), wantState: rayv1.JobDeploymentStatusComplete,
		},
		"SidecarMode: head Pod gone: Failed": {
			job: makeJob(mode(rayv1.SidecarMode), inState(rayv1.JobDeploymentStatusRunning)), objs: []client.Object{makeCluster(rayv1.Ready), headService()},
			setup: withRayJob(rayv1.JobStatusRunning), wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
		},
		"SidecarMode: submitter container failed: SubmissionFailed": {
			job: makeJob(mode(rayv1.SidecarMode), inState(rayv1.JobDeploymentStatusRunning)),
			objs: []client.Object{makeCluster(rayv1.Ready), headService(),
				headPod(&corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: metav1.Time{Time: t0}})},
			setup: withRayJob(rayv1.JobStatusRunning), wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.SubmissionFailed,
		},
		"SidecarMode: submitter still running: Running": {
			job:   makeJob(mode(rayv1.SidecarMode), inState(rayv1.JobDeploymentStatusRunning)),
			objs:  []client.Object{makeCluster(rayv1.Ready), headService(), headPod(nil)},
			setup: withRayJob(rayv1.JobStatusSucceeded), wantState: rayv1.JobDeploymentStatusRunning,
		},
		"SidecarMode: submitter exited 0 and the job succeeded: Complete": {
			job: makeJob(mode(rayv1.SidecarMode), inState(rayv1.JobDeploymentStatusRunning)),
			objs: []client.Object{makeCluster(rayv1.Ready), headService(),
				headPod(&corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.Time{Time: t0}})},
			setup: withRayJob(rayv1.JobStatusSucceeded), wantState: rayv1.JobDeploymentStatusComplete,
		},
	})
}

// TestReleasing covers Suspending -> Suspended, Retrying -> New and
// Suspended -> New.
func TestReleasing(t *testing.T) {
	suspending := func(j *rayv1.RayJob) { j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true }
	runTransitions(t, map[string]transitionCase{
		"Suspending deletes the cluster and the submitter, then waits": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusSuspending), suspending),
			objs:      running(""),
			wantState: rayv1.JobDeploymentStatusSuspending,
			check: func(t *testing.T, e *testEnv, _ *rayv1.RayJob) {
				if e.exists(t, makeCluster("")) || e.exists(t, submitterJob("", t0)) {
					t.Error("cluster or submitter Job left")
				}
			},
		},
		"Suspending with everything gone: Suspended, attempt forgotten": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusSuspending), suspending, jobStatus(rayv1.JobStatusRunning)),
			wantState: rayv1.JobDeploymentStatusSuspended,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				s := job.Status
				if s.RayClusterName != "" || s.JobID != "" || s.DashboardURL != "" || s.JobStatus != rayv1.JobStatusNew {
					t.Errorf("status not reset: %+v", s)
				}
			},
		},
		"Suspending completes even when suspend was cleared": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusSuspending)),
			wantState: rayv1.JobDeploymentStatusSuspended,
		},
		"Retrying with everything gone: New, keeping the counters": {
			job: makeJob(inState(rayv1.JobDeploymentStatusRetrying), func(j *rayv1.RayJob) {
				j.Spec.BackoffLimit = ptr.To[int32](2)
				j.Status.Failed = ptr.To[int32](1)
				j.Status.Reason = rayv1.AppFailed
			}),
			wantState: rayv1.JobDeploymentStatusNew,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if *job.Status.Failed != 1 || job.Status.RayClusterName != "" {
					t.Errorf("failed %d cluster %q", *job.Status.Failed, job.Status.RayClusterName)
				}
			},
		},
		"Suspended stays while suspend is set": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusSuspended), suspending),
			wantState: rayv1.JobDeploymentStatusSuspended,
		},
		"Suspended resumes to New": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusSuspended)),
			wantState: rayv1.JobDeploymentStatusNew,
		},
	})
}

// TestValidationFailed covers (any) -> ValidationFailed.
func TestValidationFailed(t *testing.T) {
	runTransitions(t, map[string]transitionCase{
		"invalid spec from New": {
			job:        makeJob(func(j *rayv1.RayJob) { j.Spec.Suspend = true }),
			wantState:  rayv1.JobDeploymentStatusValidationFailed,
			wantReason: rayv1.ValidationFailed,
			check: func(t *testing.T, e *testEnv, job *rayv1.RayJob) {
				if !strings.Contains(job.Status.Message, "shutdownAfterJobFinishes set to false is not allowed to be suspended") {
					t.Errorf("message %q", job.Status.Message)
				}
				if ev := <-e.events.Events; !strings.Contains(ev, "InvalidRayJobSpec") {
					t.Errorf("event %q", ev)
				}
			},
		},
		"invalid status while Running": {
			job:        makeJob(inState(rayv1.JobDeploymentStatusWaiting)),
			wantState:  rayv1.JobDeploymentStatusValidationFailed,
			wantReason: rayv1.ValidationFailed,
		},
		"rayClusterSpec.upgradeStrategy fails up front, before any cluster": {
			job: makeJob(func(j *rayv1.RayJob) {
				j.Spec.RayClusterSpec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate)}
			}),
			wantState: rayv1.JobDeploymentStatusValidationFailed, wantReason: rayv1.ValidationFailed,
			check: func(t *testing.T, e *testEnv, job *rayv1.RayJob) {
				if !strings.Contains(job.Status.Message, "upgradeStrategy cannot be set when RayCluster is created by RayJob") {
					t.Errorf("message %q", job.Status.Message)
				}
				clusters := &rayv1.RayClusterList{}
				if err := e.client.List(t.Context(), clusters); err != nil || len(clusters.Items) != 0 {
					t.Errorf("clusters %v, err %v", clusters.Items, err)
				}
			},
		},
		"ValidationFailed is final": {
			job:       makeJob(inState(rayv1.JobDeploymentStatusValidationFailed), func(j *rayv1.RayJob) { j.Status.Reason = rayv1.ValidationFailed }),
			wantState: rayv1.JobDeploymentStatusValidationFailed, wantReason: rayv1.ValidationFailed,
		},
	})
}
