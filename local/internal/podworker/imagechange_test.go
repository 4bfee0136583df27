package podworker

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestImageChangeRestartsContainer(t *testing.T) {
	// Never: a container whose spec changed restarts whatever the policy.
	pod := makePod(corev1.RestartPolicyNever, nil, "main")
	h := newHarness(t, pod)
	old := h.nextStart("main")
	h.waitPod("Running", phaseIs(corev1.PodRunning))
	h.clk.Step(time.Second)
	next := pod.DeepCopy()
	next.Spec.Containers[0].Image = "rayproject/ray:2.60.0"
	h.w.Update(next)
	h.waitEvent("Normal Killing Container main definition changed, will be restarted")
	started := h.nextStart("main")
	if started.spec.Attempt != 1 {
		t.Errorf("attempt = %d, want 1", started.spec.Attempt)
	}
	h.waitEvent(`Normal Pulled Container image "rayproject/ray:2.60.0" already present on machine (local: /venv)`)
	got := h.waitPod("restarted", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 1 })
	st := got.Status.ContainerStatuses[0]
	want := corev1.ContainerStatus{
		Name: "main", Image: "rayproject/ray:2.60.0", ImageID: "local:///venv", RestartCount: 1, Ready: true, Started: ptr.To(true),
		ContainerID: "runc://main-1",
		State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(time.Second))}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 143, Signal: 15, Reason: reasonError, StartedAt: metav1.NewTime(old.started), FinishedAt: metav1.NewTime(t0.Add(time.Second)),
			ContainerID: "runc://main-0",
		}},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("container status (-want +got):\n%s", diff)
	}
	if got.Status.Phase != corev1.PodRunning {
		t.Errorf("phase = %s, want Running", got.Status.Phase)
	}
}

func TestImageChangeToUnknownImageWaits(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	h := newHarness(t, pod)
	h.nextStart("main")
	h.waitPod("Running", phaseIs(corev1.PodRunning))
	next := pod.DeepCopy()
	next.Spec.Containers[0].Image = "nginx"
	h.w.Update(next)
	got := h.waitPod("ErrImagePull", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].State.Waiting != nil })
	h.noStart()
	want := &corev1.ContainerStateWaiting{Reason: reasonErrImagePull, Message: `image "nginx" has no local equivalent`}
	st := got.Status.ContainerStatuses[0]
	if diff := cmp.Diff(want, st.State.Waiting); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	if st.Image != "nginx" || st.LastTerminationState.Terminated == nil || st.Ready {
		t.Errorf("status = %+v, want image nginx, the killed attempt as lastState, not ready", st)
	}
	h.waitEvent(`Warning Failed Failed to pull image "nginx"`)

	fixed := pod.DeepCopy() // back to an image with a local equivalent
	h.w.Update(fixed)
	h.nextStart("main")
	h.waitPod("running again", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].State.Running != nil })
}

func TestImageFixFreesPendingPod(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].Image = "nginx"
	h := newHarness(t, pod)
	h.waitPod("ErrImagePull", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses != nil })
	h.noStart()
	fixed := pod.DeepCopy()
	fixed.Spec.Containers[0].Image = "busybox"
	h.w.Update(fixed)
	h.nextStart("main")
	got := h.waitPod("Running", phaseIs(corev1.PodRunning))
	if st := got.Status.ContainerStatuses[0]; st.Image != "busybox" || st.RestartCount != 0 {
		t.Errorf("status = %+v, want image busybox, no restart", st)
	}
}

func TestImageChangeEndsCrashLoopBackOff(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	h := newHarness(t, pod)
	h.nextStart("main").exit(1)
	h.nextStart("main").exit(1) // the first restart is immediate, the next one waits 10 s
	h.waitPod("CrashLoopBackOff", func(p *corev1.Pod) bool {
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == reasonCrashLoopBackOff
	})
	h.noStart()
	next := pod.DeepCopy()
	next.Spec.Containers[0].Image = "rayproject/ray:2.60.0"
	h.w.Update(next)
	if p := h.nextStart("main"); p.spec.Attempt != 2 {
		t.Errorf("attempt = %d, want 2", p.spec.Attempt)
	}
	got := h.waitPod("running", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].State.Running != nil })
	if st := got.Status.ContainerStatuses[0]; st.Image != "rayproject/ray:2.60.0" || st.RestartCount != 2 {
		t.Errorf("image, restarts = %s, %d; want rayproject/ray:2.60.0, 2", st.Image, st.RestartCount)
	}
}
