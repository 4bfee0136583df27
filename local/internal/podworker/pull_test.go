package podworker

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// waitingOf is the first container's waiting state, when it waits.
func waitingOf(p *corev1.Pod) *corev1.ContainerStateWaiting {
	if len(p.Status.ContainerStatuses) == 0 {
		return nil
	}
	return p.Status.ContainerStatuses[0].State.Waiting
}

// waitingWith tells whether the first container waits with reason.
func waitingWith(reason string) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { w := waitingOf(p); return w != nil && w.Reason == reason }
}

func TestPullReportsPullingAndPulled(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].Image = "rayproject/ray:2.41.0"
	h := newHarness(t, pod)
	h.waitEvent(`Normal Pulling Pulling image "rayproject/ray:2.41.0"`)
	got := h.waitPod("ContainerCreating", waitingWith(reasonContainerCreating))
	if got.Status.Phase != corev1.PodPending {
		t.Errorf("phase while pulling = %s, want Pending", got.Status.Phase)
	}
	h.noStart()
	h.clk.Step(42 * time.Second)
	h.in.pulls <- nil
	h.waitEvent(`Normal Pulled Successfully pulled image "rayproject/ray:2.41.0" in 42s (local: /venv-2.41.0)`)
	h.nextStart("main")
	if ev := h.waitEvent("Normal "); ev != "Normal Created Created container main" {
		t.Errorf("event after the pull = %q, want Created (no second Pulled)", ev)
	}
	h.waitPod("Running", phaseIs(corev1.PodRunning))
}

func TestPullFailureBacksOffAndRetries(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].Image = "rayproject/ray:2.41.0"
	h := newHarness(t, pod)
	h.in.pulls <- errors.New("installing ray[default,serve]==2.41.0: PyPI is unreachable (NameResolutionError)")
	got := h.waitPod("ErrImagePull", waitingWith(reasonErrImagePull))
	want := &corev1.ContainerStateWaiting{Reason: reasonErrImagePull, Message: "installing ray[default,serve]==2.41.0: PyPI is unreachable (NameResolutionError)"}
	if diff := cmp.Diff(want, waitingOf(got)); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	h.waitEvent(`Warning Failed Failed to pull image "rayproject/ray:2.41.0": installing ray[default,serve]==2.41.0: PyPI is unreachable`)
	h.waitEvent("Warning Failed Error: ErrImagePull")

	h.waitTimers(1)
	h.clk.Step(pullErrorShownFor)
	got = h.waitPod("ImagePullBackOff", waitingWith(reasonImagePullBackOff))
	want = &corev1.ContainerStateWaiting{Reason: reasonImagePullBackOff, Message: `Back-off pulling image "rayproject/ray:2.41.0": ErrImagePull: installing ray[default,serve]==2.41.0: PyPI is unreachable (NameResolutionError)`}
	if diff := cmp.Diff(want, waitingOf(got)); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	h.waitEvent(`Normal BackOff Back-off pulling image "rayproject/ray:2.41.0"`)
	h.noStart()

	// The image back-off starts at 10 s: the pull runs again then.
	h.waitTimers(1)
	h.clk.Step(initialBackoff - pullErrorShownFor)
	h.waitEvent(`Normal Pulling Pulling image "rayproject/ray:2.41.0"`)
	h.in.pulls <- nil
	h.nextStart("main")
	h.waitPod("Running", phaseIs(corev1.PodRunning))
}
