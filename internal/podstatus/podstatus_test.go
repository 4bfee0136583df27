package podstatus

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRunningAndReady(t *testing.T) {
	pod := func(phase corev1.PodPhase, conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, Conditions: conds}}
	}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	notReady := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse}
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	for name, tc := range map[string]struct {
		pod        *corev1.Pod
		wantReady  bool
		wantRunRdy bool
	}{
		"nil":                   {pod: nil},
		"running and ready":     {pod: pod(corev1.PodRunning, scheduled, ready), wantReady: true, wantRunRdy: true},
		"running, not ready":    {pod: pod(corev1.PodRunning, notReady)},
		"running, no condition": {pod: pod(corev1.PodRunning, scheduled)},
		"pending but ready":     {pod: pod(corev1.PodPending, ready), wantReady: true},
		"succeeded":             {pod: pod(corev1.PodSucceeded)},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.pod != nil {
				if got := Ready(tc.pod); got != tc.wantReady {
					t.Errorf("Ready = %v, want %v", got, tc.wantReady)
				}
			}
			if got := RunningAndReady(tc.pod); got != tc.wantRunRdy {
				t.Errorf("RunningAndReady = %v, want %v", got, tc.wantRunRdy)
			}
		})
	}
}
