package podworker

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// makePod builds a pod of busybox containers.
func makePod(policy corev1.RestartPolicy, initCtrs []corev1.Container, ctrs ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"},
		Spec:       corev1.PodSpec{RestartPolicy: policy, InitContainers: initCtrs, TerminationGracePeriodSeconds: ptr.To[int64](30)},
		Status:     corev1.PodStatus{QOSClass: corev1.PodQOSBestEffort},
	}
	for _, name := range ctrs {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: name, Image: "busybox", Command: []string{"sh", "-c", name}})
	}
	return pod
}

func initCtr(name string, sidecar bool) corev1.Container {
	c := corev1.Container{Name: name, Image: "busybox"}
	if sidecar {
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	}
	return c
}

func phaseIs(phase corev1.PodPhase) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return p.Status.Phase == phase }
}

func terminated(name string, code int32, reason string, started, finished time.Time, attempt int) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, Image: "busybox", ImageID: "local:///bin", Started: ptr.To(false),
		ContainerID: "runc://" + name + "-" + itoa(attempt),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(finished),
			ContainerID: "runc://" + name + "-" + itoa(attempt),
		}},
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestInitContainersRunInOrderThenPodSucceeds(t *testing.T) {
	h := newHarness(t, makePod(corev1.RestartPolicyNever, []corev1.Container{initCtr("init-a", false), initCtr("init-b", false)}, "main"))
	h.nextStart("init-a").exit(0)
	b := h.nextStart("init-b")
	h.noStart()
	h.clk.Step(time.Second)
	b.exit(0)
	h.nextStart("main").exit(0)
	got := h.waitPod("Succeeded", phaseIs(corev1.PodSucceeded))

	at := metav1.NewTime(t0)
	t1 := t0.Add(time.Second)
	want := corev1.PodStatus{
		Phase:     corev1.PodSucceeded,
		HostIP:    "10.244.0.1",
		HostIPs:   []corev1.HostIP{{IP: "10.244.0.1"}},
		PodIP:     "127.0.0.1",
		PodIPs:    []corev1.PodIP{{IP: "127.0.0.1"}},
		StartTime: &at,
		QOSClass:  corev1.PodQOSBestEffort,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, Reason: reasonPodCompleted, LastTransitionTime: metav1.NewTime(t1)},
			// main was Running and Ready at t1 before it exited.
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonPodCompleted, LastTransitionTime: metav1.NewTime(t1)},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: reasonPodCompleted, LastTransitionTime: metav1.NewTime(t1)},
		},
		InitContainerStatuses: []corev1.ContainerStatus{
			terminated("init-a", 0, reasonCompleted, t0, t0, 0),
			terminated("init-b", 0, reasonCompleted, t0, t1, 0),
		},
		ContainerStatuses: []corev1.ContainerStatus{terminated("main", 0, reasonCompleted, t1, t1, 0)},
	}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestFailedInitContainerFailsPodUnderNever(t *testing.T) {
	h := newHarness(t, makePod(corev1.RestartPolicyNever, []corev1.Container{initCtr("init", false)}, "main"))
	h.nextStart("init").exit(2)
	got := h.waitPod("Failed", phaseIs(corev1.PodFailed))
	h.noStart()
	if s := got.Status.ContainerStatuses[0].State.Waiting; s == nil || s.Reason != reasonPodInitializing {
		t.Errorf("main container state = %+v, want waiting PodInitializing", got.Status.ContainerStatuses[0].State)
	}
}

func TestCrashLoopBackOffDoublesFromTenSeconds(t *testing.T) {
	h := newHarness(t, makePod(corev1.RestartPolicyAlways, nil, "main"))
	h.nextStart("main").exit(1)
	p := h.nextStart("main") // the first restart is immediate
	if p.spec.Attempt != 1 {
		t.Fatalf("attempt = %d, want 1", p.spec.Attempt)
	}
	for i, delay := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second} {
		p.exit(1)
		want := &corev1.ContainerStateWaiting{
			Reason:  reasonCrashLoopBackOff,
			Message: "back-off " + delay.String() + " restarting failed container=main pod=p_ns(uid-1)",
		}
		got := h.waitPod("CrashLoopBackOff", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].State.Waiting != nil })
		st := got.Status.ContainerStatuses[0]
		if diff := cmp.Diff(want, st.State.Waiting); diff != "" {
			t.Errorf("restart %d: waiting (-want +got):\n%s", i+2, diff)
		}
		if st.RestartCount != int32(i+1) || st.LastTerminationState.Terminated == nil || got.Status.Phase != corev1.PodRunning {
			t.Errorf("restart %d: restartCount %d, lastState %+v, phase %s", i+2, st.RestartCount, st.LastTerminationState, got.Status.Phase)
		}
		h.waitTimers(1)
		h.clk.Step(delay - time.Second)
		h.noStart()
		h.clk.Step(time.Second)
		p = h.nextStart("main")
	}
}

func TestOnFailureRestartsOnlyFailures(t *testing.T) {
	h := newHarness(t, makePod(corev1.RestartPolicyOnFailure, nil, "main"))
	h.nextStart("main").exit(3)
	h.nextStart("main").exit(0)
	got := h.waitPod("Succeeded", phaseIs(corev1.PodSucceeded))
	st := got.Status.ContainerStatuses[0]
	if st.RestartCount != 1 || st.LastTerminationState.Terminated.ExitCode != 3 || st.State.Terminated.Reason != reasonCompleted {
		t.Errorf("status = %+v", st)
	}
}

func TestImageWithoutLocalEquivalentNeverRuns(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].Image = "nginx"
	h := newHarness(t, pod)
	got := h.waitPod("ErrImagePull", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses != nil })
	want := &corev1.ContainerStateWaiting{Reason: reasonErrImagePull, Message: `image "nginx" has no local equivalent`}
	if diff := cmp.Diff(want, got.Status.ContainerStatuses[0].State.Waiting); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	if got.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %s, want Pending", got.Status.Phase)
	}
	h.noStart()
	if ev := <-h.rec.Events; ev != `Warning Failed Failed to pull image "nginx": image "nginx" has no local equivalent` {
		t.Errorf("event = %q", ev)
	}
}

func TestConfigErrorRetriesUntilFixed(t *testing.T) {
	h := newHarness(t, makePod(corev1.RestartPolicyAlways, nil, "main"), func(h *harness) {
		h.in.configErr["main"] = `secret "s" not found`
	})
	got := h.waitPod("CreateContainerConfigError", func(p *corev1.Pod) bool {
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == reasonConfigError
	})
	if msg := got.Status.ContainerStatuses[0].State.Waiting.Message; msg != `secret "s" not found` {
		t.Errorf("message = %q", msg)
	}
	h.in.mu.Lock()
	delete(h.in.configErr, "main")
	h.in.mu.Unlock()
	h.waitTimers(1)
	h.clk.Step(time.Second)
	h.nextStart("main")
	h.waitPod("Running", phaseIs(corev1.PodRunning))
}

func TestSidecarStartsBeforeNextInitAndStopsAfterMain(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, []corev1.Container{initCtr("sidecar", true), initCtr("init", false)}, "main")
	h := newHarness(t, pod)
	sidecar := h.nextStart("sidecar")
	h.nextStart("init").exit(0)
	main := h.nextStart("main")
	h.waitPod("Ready", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && p.Status.ContainerStatuses[0].Ready
	})

	main.ignoreTerm = true
	h.w.RequestDelete(ptr.To[int64](5))
	h.waitTimers(1)
	if len(sidecar.signals) != 0 {
		t.Fatalf("sidecar signalled before the main container stopped: %v", sidecar.signals)
	}
	h.clk.Step(5 * time.Second) // grace over: SIGKILL
	final := <-h.finalized
	if code := final.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != 137 {
		t.Errorf("main exit code = %d, want 137", code)
	}
	if code := final.Status.InitContainerStatuses[0].State.Terminated.ExitCode; code != 143 {
		t.Errorf("sidecar exit code = %d, want 143 (SIGTERM after main)", code)
	}
	if final.Status.Phase != corev1.PodFailed {
		t.Errorf("phase = %s, want Failed", final.Status.Phase)
	}
	if !h.rt.boxes[0].destroyed {
		t.Error("sandbox not destroyed")
	}
}

func TestLivenessFailureRestartsContainer(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}},
		PeriodSeconds: 5, FailureThreshold: 2, TimeoutSeconds: 1, SuccessThreshold: 1,
	}
	h := newHarness(t, pod)
	p := h.nextStart("main")
	h.waitTimers(1) // the probe's ticker after its first (failed) run
	h.clk.Step(5 * time.Second)
	h.nextStart("main") // killed after the second failure, restarted at once
	p.mu.Lock()
	signals := p.signals
	p.mu.Unlock()
	if got := signals; len(got) != 1 {
		t.Errorf("signals = %v, want one SIGTERM", got)
	}
	got := h.waitPod("restart", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 1 })
	if code := got.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode; code != 143 {
		t.Errorf("last exit code = %d, want 143", code)
	}
}

func TestReadinessProbeDrivesReady(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: 10, FailureThreshold: 1, SuccessThreshold: 2, TimeoutSeconds: 1,
	}
	h := newHarness(t, pod)
	h.nextStart("main")
	got := h.waitPod("Running", phaseIs(corev1.PodRunning))
	if got.Status.ContainerStatuses[0].Ready {
		t.Fatal("ready before the readiness probe passed")
	}
	h.waitTimers(1)
	h.clk.Step(10 * time.Second) // second success reaches successThreshold 2
	got = h.waitPod("Ready", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].Ready })
	want := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(10 * time.Second))}
	if diff := cmp.Diff(want, got.Status.Conditions[2]); diff != "" {
		t.Errorf("Ready condition (-want +got):\n%s", diff)
	}
}

func TestHooksAndStartupProbe(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	c := &pod.Spec.Containers[0]
	c.Lifecycle = &corev1.Lifecycle{
		PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"post"}}},
		PreStop:   &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"pre"}}},
	}
	c.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"startup"}}}, PeriodSeconds: 1, FailureThreshold: 3, SuccessThreshold: 1}
	h := newHarness(t, pod)
	p := h.nextStart("main")
	got := h.waitPod("started", func(p *corev1.Pod) bool { return ptr.Deref(p.Status.ContainerStatuses[0].Started, false) })
	if !got.Status.ContainerStatuses[0].Ready {
		t.Error("started container without readiness probe is not ready")
	}
	h.w.RequestDelete(nil)
	final := <-h.finalized
	p.mu.Lock()
	calls := p.calls
	p.mu.Unlock()
	if diff := cmp.Diff([]string{"exec post", "exec startup", "exec pre", "signal terminated"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if final.Status.Phase != corev1.PodFailed || final.Status.ContainerStatuses[0].State.Terminated.ExitCode != 143 {
		t.Errorf("final status %+v", final.Status)
	}
}
