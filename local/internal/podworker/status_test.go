package podworker

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestReadinessGates(t *testing.T) {
	const gate corev1.PodConditionType = "example.com/lb"
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	h := newHarness(t, pod)
	h.nextStart("main")
	steps := []struct {
		name  string
		gate  *corev1.ConditionStatus // the condition others set; nil: none
		ready corev1.PodCondition
	}{
		{
			name: "no condition yet",
			ready: corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonReadinessGatesNotReady,
				Message: `corresponding condition of pod readiness gate "example.com/lb" does not exist.`},
		},
		{
			name: "condition False", gate: ptr.To(corev1.ConditionFalse),
			ready: corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonReadinessGatesNotReady,
				Message: `the status of pod readiness gate "example.com/lb" is not "True", but False`},
		},
		{name: "condition True", gate: ptr.To(corev1.ConditionTrue), ready: corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		{
			name: "condition back to False", gate: ptr.To(corev1.ConditionFalse),
			ready: corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonReadinessGatesNotReady,
				Message: `the status of pod readiness gate "example.com/lb" is not "True", but False`},
		},
	}
	for i, step := range steps {
		h.clk.Step(time.Second)
		at := metav1.NewTime(h.clk.Now())
		if step.gate != nil {
			next := pod.DeepCopy()
			next.Status.Conditions = []corev1.PodCondition{{Type: gate, Status: *step.gate, LastTransitionTime: at}}
			h.w.Update(next)
		}
		got := h.waitPod(step.name, func(p *corev1.Pod) bool {
			c := condition(p, corev1.PodReady)
			return p.Status.ContainerStatuses[0].Ready && c.Status == step.ready.Status && c.Message == step.ready.Message
		})
		if diff := cmp.Diff(step.ready, condition(got, corev1.PodReady), cmpIgnoreTransition()); diff != "" {
			t.Errorf("step %d (%s): Ready (-want +got):\n%s", i, step.name, diff)
		}
		if c := condition(got, corev1.ContainersReady); c.Status != corev1.ConditionTrue {
			t.Errorf("step %d (%s): ContainersReady = %+v, want True whatever the gates", i, step.name, c)
		}
		if step.gate != nil {
			want := corev1.PodCondition{Type: gate, Status: *step.gate, LastTransitionTime: at}
			if diff := cmp.Diff(want, condition(got, gate)); diff != "" {
				t.Errorf("step %d (%s): the gate's condition is not kept (-want +got):\n%s", i, step.name, diff)
			}
		}
	}
}

// cmpIgnoreTransition compares pod conditions without their transition
// times.
func cmpIgnoreTransition() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".LastTransitionTime" }, cmp.Ignore())
}
