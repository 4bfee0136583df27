package podworker

import (
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// adoptedPod is a pod an earlier node agent ran: init container done, "app"
// running its third attempt (restartCount 2, last exit 1), "side" running
// its first; both started and ready, as the API status says.
func adoptedPod() *corev1.Pod {
	pod := makePod(corev1.RestartPolicyAlways, []corev1.Container{initCtr("setup", false)}, "app", "side")
	started := metav1.NewTime(t0.Add(-time.Hour))
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, StartTime: &started, QOSClass: corev1.PodQOSBestEffort,
		Conditions:            []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
		InitContainerStatuses: []corev1.ContainerStatus{terminated("setup", 0, reasonCompleted, started.Time, started.Add(time.Second), 0)},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", ContainerID: "runc://app-2", RestartCount: 2, Started: ptr.To(true), Ready: true,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: reasonError}}},
			{Name: "side", ContainerID: "runc://side-0", Started: ptr.To(true), Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}},
		},
	}
	return pod
}

// TestAdoptedContainersRunOn: a worker whose sandbox was adopted with both
// containers running starts nothing, reports them running and ready with
// their restart counts, the init container done and the pod's start time
// from the API; a later exit restarts the container as usual, counting on
// from the adopted attempt.
func TestAdoptedContainersRunOn(t *testing.T) {
	pod := adoptedPod()
	var app, side *fakeProc
	h := newHarness(t, pod, func(h *harness) {
		app = &fakeProc{spec: sandbox.ContainerSpec{Name: "app", Attempt: 2}, clk: h.clk, started: t0.Add(-time.Minute), done: make(chan struct{})}
		side = &fakeProc{spec: sandbox.ContainerSpec{Name: "side", Attempt: 0}, clk: h.clk, started: t0.Add(-time.Hour), done: make(chan struct{})}
		h.rt.adopt = map[string][]Adoptee{string(pod.UID): {app, side}}
	})
	got := h.waitPod("adopted and ready", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 2 && p.Status.ContainerStatuses[0].Ready && p.Status.ContainerStatuses[1].Ready
	})
	h.noStart()
	st := got.Status.ContainerStatuses[0]
	if st.RestartCount != 2 || st.ContainerID != "runc://app-2" || st.State.Running == nil || !st.State.Running.StartedAt.Time.Equal(app.started) ||
		st.LastTerminationState.Terminated == nil || st.LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("app status %+v", st)
	}
	if !got.Status.StartTime.Time.Equal(pod.Status.StartTime.Time) || got.Status.Phase != corev1.PodRunning {
		t.Errorf("pod start %s phase %s, want %s Running", got.Status.StartTime, got.Status.Phase, pod.Status.StartTime)
	}
	if init := got.Status.InitContainerStatuses[0]; init.State.Terminated == nil || init.State.Terminated.Reason != reasonCompleted {
		t.Errorf("init container status %+v, want terminated Completed", init)
	}
	app.exit(2)
	if next := h.nextStart("app"); next.spec.Attempt != 3 {
		t.Errorf("restarted app as attempt %d, want 3", next.spec.Attempt)
	}
	got = h.waitPod("restarted", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 3 })
	if last := got.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil || last.ExitCode != 2 || last.ContainerID != "runc://app-2" {
		t.Errorf("lastState after the restart %+v, want the adopted attempt's exit 2", last)
	}
}

// TestAdoptedEndedContainerIsRestarted: a container that ended while no
// node agent ran is handled as an exit when adopted: in an Always pod it
// restarts with the next attempt, its end in lastState.
func TestAdoptedEndedContainerIsRestarted(t *testing.T) {
	pod := adoptedPod()
	h := newHarness(t, pod, func(h *harness) {
		app := &fakeProc{spec: sandbox.ContainerSpec{Name: "app", Attempt: 2}, clk: h.clk, started: t0.Add(-time.Minute), done: make(chan struct{})}
		side := &fakeProc{spec: sandbox.ContainerSpec{Name: "side", Attempt: 0}, clk: h.clk, started: t0.Add(-time.Hour), done: make(chan struct{})}
		app.exit(137)
		h.rt.adopt = map[string][]Adoptee{string(pod.UID): {app, side}}
	})
	if next := h.nextStart("app"); next.spec.Attempt != 3 {
		t.Errorf("restarted app as attempt %d, want 3", next.spec.Attempt)
	}
	got := h.waitPod("restarted", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 3 })
	if last := got.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil || last.ExitCode != 137 {
		t.Errorf("lastState %+v, want the exit of 137 that happened while no node ran", last)
	}
	if side := got.Status.ContainerStatuses[1]; side.RestartCount != 0 || side.State.Running == nil {
		t.Errorf("side %+v, want running, never restarted", side)
	}
	h.noStart()
}

// TestPodDeletedWhileNoAgentRanIsStopped: a pod deleted while no node agent
// ran (the restarted node finds it terminating, "app" adopted running,
// "side" gone with the runtime's records) gets nothing started: the
// adopted container gets SIGTERM, the sandbox is destroyed and the pod
// object removed, its status the container's end.
func TestPodDeletedWhileNoAgentRanIsStopped(t *testing.T) {
	pod := adoptedPod()
	var app *fakeProc
	h := newHarness(t, pod, func(h *harness) {
		app = &fakeProc{spec: sandbox.ContainerSpec{Name: "app", Attempt: 2}, clk: h.clk, started: t0.Add(-time.Minute), done: make(chan struct{})}
		h.rt.adopt = map[string][]Adoptee{string(pod.UID): {app}}
		h.deletedFirst, h.grace = true, ptr.To[int64](30)
	})
	var final *corev1.Pod
	select {
	case final = <-h.finalized:
	case <-time.After(10 * time.Second):
		t.Fatal("the deleted pod was not removed")
	}
	h.noStart()
	app.mu.Lock()
	signals := app.signals
	app.mu.Unlock()
	if len(signals) != 1 || signals[0] != syscall.SIGTERM || app.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("app: signals %v, exit %d; want one SIGTERM it ended on", signals, app.ExitCode())
	}
	if len(h.rt.boxes) != 1 || !h.rt.boxes[0].destroyed {
		t.Errorf("sandboxes %d, want the adopted one, destroyed", len(h.rt.boxes))
	}
	st := final.Status.ContainerStatuses[0]
	if st.State.Terminated == nil || st.State.Terminated.ExitCode != 143 || st.RestartCount != 2 {
		t.Errorf("app's final status %+v, want terminated 143 with restart count 2", st)
	}
}
