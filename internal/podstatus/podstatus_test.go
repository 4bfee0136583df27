package podstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestLeastWorkFirst(t *testing.T) {
	ready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	base := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	pod := func(name string, ageSeconds int, status corev1.PodStatus) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(base.Add(-time.Duration(ageSeconds) * time.Second))},
			Status:     status,
		}
	}
	for name, tc := range map[string]struct {
		pods []corev1.Pod
		want []string
	}{
		"none": {},
		"unready before ready, whatever their age": {
			pods: []corev1.Pod{pod("old-ready", 10, ready), pod("young-ready", 1, ready), pod("old-pending", 100, corev1.PodStatus{Phase: corev1.PodPending})},
			want: []string{"old-pending", "young-ready", "old-ready"},
		},
		"youngest first among equals": {
			pods: []corev1.Pod{pod("a", 30, ready), pod("b", 10, ready), pod("c", 20, ready)},
			want: []string{"b", "c", "a"},
		},
		"same second: the greater name first": {
			pods: []corev1.Pod{pod("w-a", 5, ready), pod("w-c", 5, ready), pod("w-b", 5, ready)},
			want: []string{"w-c", "w-b", "w-a"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			input := append([]corev1.Pod(nil), tc.pods...)
			var got []string
			for _, p := range LeastWorkFirst(tc.pods) {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LeastWorkFirst (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(input, tc.pods); diff != "" {
				t.Errorf("LeastWorkFirst changed its input (-before +after):\n%s", diff)
			}
		})
	}
}
