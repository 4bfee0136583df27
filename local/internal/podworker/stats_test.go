package podworker

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestRunningContainersListsRunningAttempts: a running container is listed
// with its attempt; once it has exited (and waits for its restart) it is
// not.
func TestRunningContainersListsRunningAttempts(t *testing.T) {
	h := newHarness(t, makePod(corev1.RestartPolicyNever, nil, "main", "side"))
	mainProc, sideProc := h.nextStart("main"), h.nextStart("side")
	h.waitPod("both running", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 2 && p.Status.ContainerStatuses[0].State.Running != nil && p.Status.ContainerStatuses[1].State.Running != nil
	})
	got := h.w.RunningContainers()
	if len(got) != 2 || got[0].Name != "main" || got[0].Proc != Process(mainProc) || got[1].Name != "side" || got[1].Proc != Process(sideProc) {
		t.Fatalf("RunningContainers() = %+v, want main and side with their attempts", got)
	}
	mainProc.exit(0)
	h.waitPod("main terminated", func(p *corev1.Pod) bool {
		return p.Status.ContainerStatuses[0].State.Terminated != nil
	})
	if got := h.w.RunningContainers(); len(got) != 1 || got[0].Name != "side" {
		t.Fatalf("RunningContainers() after main exited = %+v, want side alone", got)
	}
}
