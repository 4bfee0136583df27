package podworker

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestActiveDeadlineFailsPod(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	h := newHarness(t, pod)
	main := h.nextStart("main")
	main.mu.Lock()
	main.ignoreTerm = true // killed only after the 30 s grace period
	main.mu.Unlock()
	t.Cleanup(func() { main.exit(137) }) // a failed test must not wait for the grace period
	h.waitPod("Running", phaseIs(corev1.PodRunning))
	h.waitTimers(1)
	h.clk.Step(59 * time.Second)
	h.clk.Step(time.Second)
	h.waitEvent("Normal DeadlineExceeded Pod was active on the node longer than the specified deadline")
	h.waitEvent("Normal Killing Stopping container main")
	stopping := h.waitPod("DeadlineExceeded", func(p *corev1.Pod) bool { return p.Status.Reason == reasonDeadlineExceeded })
	if stopping.Status.Phase != corev1.PodRunning {
		t.Errorf("phase while the container stops = %s, want Running (not terminal before the containers stopped)", stopping.Status.Phase)
	}
	h.waitTimers(1) // the grace period
	h.clk.Step(30 * time.Second)
	got := h.waitPod("stopped", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].State.Terminated != nil })
	h.noStart()
	if got.Status.Phase != corev1.PodFailed || got.Status.Reason != reasonDeadlineExceeded || got.Status.Message != messageDeadlineExceeded {
		t.Errorf("phase, reason, message = %s, %q, %q; want Failed, DeadlineExceeded", got.Status.Phase, got.Status.Reason, got.Status.Message)
	}
	st := got.Status.ContainerStatuses[0]
	if st.State.Terminated.ExitCode != 137 || st.RestartCount != 0 {
		t.Errorf("container: exit code %d, restarts %d; want 137 (SIGKILL after the grace period), 0", st.State.Terminated.ExitCode, st.RestartCount)
	}
	if c := condition(got, corev1.PodReady); c.Status != corev1.ConditionFalse {
		t.Errorf("Ready = %+v, want False", c)
	}
}

func TestLoweredActiveDeadlineTakesEffect(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
	h := newHarness(t, pod)
	h.nextStart("main")
	h.waitPod("Running", phaseIs(corev1.PodRunning))
	h.waitTimers(1)
	h.clk.Step(30 * time.Second)
	lowered := pod.DeepCopy()
	lowered.Spec.ActiveDeadlineSeconds = ptr.To[int64](20)
	h.w.Update(lowered)
	got := h.waitPod("Failed", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].State.Terminated != nil })
	h.noStart()
	if got.Status.Phase != corev1.PodFailed || got.Status.Reason != reasonDeadlineExceeded {
		t.Errorf("phase, reason = %s, %q; want Failed, DeadlineExceeded", got.Status.Phase, got.Status.Reason)
	}
	if code := got.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != 143 {
		t.Errorf("exit code = %d, want 143 (SIGTERM)", code)
	}
}
