package rayjob_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// withSidecarRestart turns SidecarSubmitterRestart on (with
// RayJobDeletionPolicy, as every world here).
func withSidecarRestart(t *testing.T) func(*rayjob.Options) {
	return func(o *rayjob.Options) {
		gate := features.NewGate()
		if err := gate.SetFromMap(map[string]bool{string(features.RayJobDeletionPolicy): true, string(features.SidecarSubmitterRestart): true}); err != nil {
			t.Fatal(err)
		}
		o.Features = gate
	}
}

// TestLifecycleSidecarModeSubmitterRestart: with SidecarSubmitterRestart the
// head Pod the API server stores (1.36: ContainerRestartRules on) keeps the
// submitter's restartPolicy OnFailure and its status-checking command, and a
// submitter that failed and restarted once does not fail the RayJob: it
// completes from the Ray job's status.
func TestLifecycleSidecarModeSubmitterRestart(t *testing.T) {
	w := newWorld(t, withSidecarRestart(t))
	w.Create(rayJob("restart", rayv1.SidecarMode))
	cluster := w.RayJobCluster("restart")
	created := w.createHeadPod(cluster)

	pod := &corev1.Pod{}
	if !w.Get(created.Name, pod) {
		t.Fatal("head Pod not found")
	}
	sub := pod.Spec.Containers[len(pod.Spec.Containers)-1]
	if sub.Name != "ray-job-submitter" || sub.RestartPolicy == nil || *sub.RestartPolicy != corev1.ContainerRestartPolicyOnFailure ||
		pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("stored head Pod: pod restartPolicy %q, submitter %q restartPolicy %v", pod.Spec.RestartPolicy, sub.Name, sub.RestartPolicy)
	}
	if !strings.Contains(sub.Args[0], "if ! ray job status --address http://127.0.0.1:8265 ") || !strings.Contains(sub.Args[0], "--no-wait") {
		t.Errorf("submitter command %q", sub.Args[0])
	}

	w.makeClusterReady(cluster.Name)
	w.WaitRayJob("restart", rayv1.JobDeploymentStatusRunning)
	w.submitLikeSubmitter("restart")
	w.setRayJobStatus("restart", rayv1.JobStatusSucceeded)
	// The first attempt was killed (137) and the kubelet restarted it; the
	// second one's log stream broke too, after the Ray job succeeded.
	// Without the gate this fails the RayJob (exit code 1).
	now := metav1.NewTime(time.Now())
	if err := testenv.UpdatePodStatus(context.Background(), w.Client, pod, func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "ray-job-submitter", RestartCount: 1,
			State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", StartedAt: now, FinishedAt: now}},
		}}
	}); err != nil {
		t.Fatal(err)
	}
	done := w.WaitRayJob("restart", rayv1.JobDeploymentStatusComplete)
	if done.Status.JobStatus != rayv1.JobStatusSucceeded || done.Status.Reason != "" {
		t.Errorf("job status %q reason %q", done.Status.JobStatus, done.Status.Reason)
	}
}
