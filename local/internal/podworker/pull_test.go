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

func TestRegistryImagePullPolicy(t *testing.T) {
	const ref = registryPrefix + "app:v1"
	tests := map[string]struct {
		policy corev1.PullPolicy
		stored bool
		// wantPull: the image is pulled before the container starts.
		wantPull bool
	}{
		"IfNotPresent, not stored, pulls":    {policy: corev1.PullIfNotPresent, wantPull: true},
		"IfNotPresent, stored, runs it":      {policy: corev1.PullIfNotPresent, stored: true},
		"Always, stored, pulls all the same": {policy: corev1.PullAlways, stored: true, wantPull: true},
		"Never, stored, runs it":             {policy: corev1.PullNever, stored: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := makePod(corev1.RestartPolicyAlways, nil, "main")
			pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy = ref, tc.policy
			h := newHarness(t, pod, func(h *harness) {
				if tc.stored {
					h.in.stored[ref] = "/store/old"
				}
			})
			wantRoot := "/store/old"
			if tc.wantPull {
				h.waitEvent(`Normal Pulling Pulling image "registry.test/app:v1"`)
				h.noStart()
				h.clk.Step(3 * time.Second)
				h.in.pulls <- nil
				h.waitEvent(`Normal Pulled Successfully pulled image "registry.test/app:v1" in 3s (local: store)`)
				wantRoot = "/store/" + ref
			} else {
				h.waitEvent(`Normal Pulled Container image "registry.test/app:v1" already present on machine (local: store)`)
			}
			if p := h.nextStart("main"); p.spec.ImageRoot != wantRoot {
				t.Errorf("the container runs on %q, want the image's root %q", p.spec.ImageRoot, wantRoot)
			}
		})
	}
}

func TestRegistryImageNeverPulledWhenAbsent(t *testing.T) {
	const ref = registryPrefix + "app:v1"
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy = ref, corev1.PullNever
	h := newHarness(t, pod)
	got := h.waitPod("ErrImageNeverPull", waitingWith(reasonErrImageNeverPull))
	want := &corev1.ContainerStateWaiting{Reason: reasonErrImageNeverPull, Message: `Container image "registry.test/app:v1" is not present with pull policy of Never`}
	if diff := cmp.Diff(want, waitingOf(got)); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	h.noStart()
	// Once the image is in the store (another pod pulled it), the next
	// look after the back-off runs it, with no pull.
	h.in.mu.Lock()
	h.in.stored[ref] = "/store/other"
	h.in.mu.Unlock()
	h.waitTimers(1)
	h.clk.Step(initialBackoff)
	if p := h.nextStart("main"); p.spec.ImageRoot != "/store/other" {
		t.Errorf("the container runs on %q, want /store/other", p.spec.ImageRoot)
	}
}

func TestRegistryImageNeverPulledRunsTheLocalImageOfItsRule(t *testing.T) {
	const ref = registryPrefix + "mapped:v1"
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy = ref, corev1.PullNever
	h := newHarness(t, pod)
	h.waitEvent(`Normal Pulled Container image "registry.test/mapped:v1" already present on machine (local: offline)`)
	if p := h.nextStart("main"); p.spec.ImageRoot != "" {
		t.Errorf("the container runs on %q, want the local image (no image root)", p.spec.ImageRoot)
	}
}

func TestRegistryImageAlwaysPulledBeforeEveryStart(t *testing.T) {
	const ref = registryPrefix + "app:latest"
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy = ref, corev1.PullAlways
	h := newHarness(t, pod)
	h.waitEvent(`Normal Pulling Pulling image "registry.test/app:latest"`)
	h.in.pulls <- nil
	h.nextStart("main").exit(1)
	// The restart pulls again, and starts once the pull ended.
	h.waitEvent(`Normal Pulling Pulling image "registry.test/app:latest"`)
	h.noStart()
	h.in.pulls <- nil
	if p := h.nextStart("main"); p.spec.Attempt != 1 {
		t.Errorf("attempt %d after the second pull, want 1", p.spec.Attempt)
	}
}
