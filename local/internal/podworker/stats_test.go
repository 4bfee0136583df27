package podworker

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
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

// TestRunningContainersDoesNotWaitForABusyWorker: while the worker waits
// out a container's grace period, RunningContainers still answers (with
// the container, which is still running) and exec into the container runs;
// once the worker has ended, there is none and exec fails.
func TestRunningContainersDoesNotWaitForABusyWorker(t *testing.T) {
	h := newHarness(t, makePod(corev1.RestartPolicyAlways, nil, "main"))
	main := h.nextStart("main")
	h.waitPod("running", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	main.mu.Lock()
	main.ignoreTerm = true
	main.mu.Unlock()
	h.w.RequestDelete(nil) // the pod's 30 s
	h.waitTimers(1)        // the worker waits for the grace period to end
	answer := make(chan []RunningContainer)
	go func() { answer <- h.w.RunningContainers() }()
	execErr := make(chan error)
	go func() {
		code, err := h.w.Exec(t.Context(), "main", sandbox.ExecSpec{Args: []string{"echo", "still here"}})
		if err == nil && code != 0 {
			err = fmt.Errorf("exit code %d", code)
		}
		execErr <- err
	}()
	for range 2 {
		select {
		case got := <-answer:
			if len(got) != 1 || got[0].Proc != Process(main) {
				t.Errorf("RunningContainers() while stopping = %+v, want main", got)
			}
		case err := <-execErr:
			if err != nil {
				t.Errorf("exec while stopping: %v", err)
			}
		case <-time.After(10 * time.Second):
			h.clk.Step(30 * time.Second) // lets the worker, and the cleanup, end
			t.Fatal("RunningContainers() or Exec waited for the worker's grace period")
		}
	}
	h.clk.Step(30 * time.Second)
	<-h.finalized
	h.w.Wait()
	if got := h.w.RunningContainers(); len(got) != 0 {
		t.Errorf("RunningContainers() after the worker ended = %+v, want none", got)
	}
	if _, err := h.w.Exec(t.Context(), "main", sandbox.ExecSpec{Args: []string{"true"}}); err == nil {
		t.Error("exec after the worker ended succeeded")
	}
}
