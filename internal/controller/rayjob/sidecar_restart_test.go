package rayjob

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
)

// restartingHead is a head Pod whose submitter container has status cs.
func restartingHead(cs corev1.ContainerStatus) *corev1.Pod {
	pod := headPod(nil)
	cs.Name = "ray-job-submitter"
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	return pod
}

// exited is a terminated container state with code.
func exited(code int32) *corev1.ContainerStateTerminated {
	reason := "Error"
	if code == 0 {
		reason = "Completed"
	}
	return &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: metav1.Time{Time: t0}}
}

// TestSidecarSubmitterRestart restates KubeRay's behaviour with the
// SidecarSubmitterRestart gate: the submitter container restarts OnFailure
// with a command that submits only once, a failed attempt is transient, and
// the RayJob fails only once the container restarted DefaultBackoffLimit (2)
// times and failed again.
func TestSidecarSubmitterRestart(t *testing.T) {
	gateOn := []envOption{withGate(string(features.SidecarSubmitterRestart), true)}
	sidecar := func(state rayv1.JobDeploymentStatus) *rayv1.RayJob {
		return makeJob(mode(rayv1.SidecarMode), inState(state))
	}
	cluster := func(objs ...client.Object) []client.Object {
		return append([]client.Object{makeCluster(rayv1.Ready), headService()}, objs...)
	}
	runTransitions(t, map[string]transitionCase{
		"the head Pod's submitter restarts OnFailure and checks the status before submitting": {
			job: sidecar(rayv1.JobDeploymentStatusInitializing), env: gateOn,
			wantState: rayv1.JobDeploymentStatusInitializing,
			check: func(t *testing.T, e *testEnv, _ *rayv1.RayJob) {
				rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster, Namespace: testNS}}
				if !e.exists(t, rc) {
					t.Fatal("no RayCluster")
				}
				pod := rc.Spec.HeadGroupSpec.Template.Spec
				if len(pod.Containers) != 2 || pod.RestartPolicy != corev1.RestartPolicyNever {
					t.Fatalf("head pod: %d containers, restart policy %q", len(pod.Containers), pod.RestartPolicy)
				}
				sub := pod.Containers[1]
				if sub.RestartPolicy == nil || *sub.RestartPolicy != corev1.ContainerRestartPolicyOnFailure {
					t.Errorf("submitter restartPolicy %v, want OnFailure", sub.RestartPolicy)
				}
				for _, part := range []string{"if ! ray job status --address http://127.0.0.1:8265 " + testJobID + " >/dev/null 2>&1 ; then",
					"--no-wait", "; fi ; ray job logs --address http://127.0.0.1:8265 --follow " + testJobID} {
					if !strings.Contains(sub.Args[0], part) {
						t.Errorf("submitter command %q lacks %q", sub.Args[0], part)
					}
				}
			},
		},
		"a first failure is transient: stays Running": {
			job: sidecar(rayv1.JobDeploymentStatusRunning), env: gateOn,
			objs:  cluster(restartingHead(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: exited(137)}})),
			setup: withRayJob(rayv1.JobStatusRunning), wantState: rayv1.JobDeploymentStatusRunning,
		},
		"restarting after one failure: stays Running": {
			job: sidecar(rayv1.JobDeploymentStatusRunning), env: gateOn,
			objs: cluster(restartingHead(corev1.ContainerStatus{RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: exited(137)}})),
			setup: withRayJob(rayv1.JobStatusRunning), wantState: rayv1.JobDeploymentStatusRunning,
		},
		"restarted twice and failed again: SubmissionFailed": {
			job: sidecar(rayv1.JobDeploymentStatusRunning), env: gateOn,
			objs: cluster(restartingHead(corev1.ContainerStatus{RestartCount: 2,
				State:                corev1.ContainerState{Terminated: exited(1)},
				LastTerminationState: corev1.ContainerState{Terminated: exited(1)}})),
			setup: withRayJob(rayv1.JobStatusRunning), wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.SubmissionFailed,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				want := "Ray head pod submitter container ray-job-submitter terminated after exceeding the maximum restart count"
				if job.Status.Message != want {
					t.Errorf("message %q, want %q", job.Status.Message, want)
				}
			},
		},
		"restarted twice, the Ray job failed: AppFailed": {
			job: makeJob(mode(rayv1.SidecarMode), inState(rayv1.JobDeploymentStatusRunning), jobStatus(rayv1.JobStatusFailed)), env: gateOn,
			objs: cluster(restartingHead(corev1.ContainerStatus{RestartCount: 2,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: exited(1)}})),
			setup: withRayJob(rayv1.JobStatusFailed), wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.AppFailed,
		},
		"restarted twice, then exited 0 with the job done: Complete": {
			job: sidecar(rayv1.JobDeploymentStatusRunning), env: gateOn,
			objs: cluster(restartingHead(corev1.ContainerStatus{RestartCount: 2,
				State:                corev1.ContainerState{Terminated: exited(0)},
				LastTerminationState: corev1.ContainerState{Terminated: exited(1)}})),
			setup: withRayJob(rayv1.JobStatusSucceeded), wantState: rayv1.JobDeploymentStatusComplete,
		},
		"a kubelet that does not restart it (older than 1.35): Failed 30 s after the exit": {
			job: sidecar(rayv1.JobDeploymentStatusRunning), env: gateOn,
			objs: cluster(restartingHead(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: exited(1)}})),
			setup: func(e *testEnv) {
				withRayJob(rayv1.JobStatusRunning)(e)
				e.clock.Step(30 * time.Second)
			},
			wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded,
		},
		"gate off: a failed submitter fails the RayJob at once": {
			job:   sidecar(rayv1.JobDeploymentStatusRunning),
			objs:  cluster(restartingHead(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: exited(137)}})),
			setup: withRayJob(rayv1.JobStatusRunning), wantState: rayv1.JobDeploymentStatusFailed, wantReason: rayv1.SubmissionFailed,
			check: func(t *testing.T, _ *testEnv, job *rayv1.RayJob) {
				if want := "Ray head pod container ray-job-submitter terminated with exit code 137: Error"; job.Status.Message != want {
					t.Errorf("message %q, want %q", job.Status.Message, want)
				}
			},
		},
	})
}
