package testenv

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestMarkPodsRunningReadyUnit(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ns"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray"}}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod).WithStatusSubresource(&corev1.Pod{}).Build()

	if err := MarkPodsRunningReady(t.Context(), c, pod); err != nil {
		t.Fatal(err)
	}
	firstIP := pod.Status.PodIP
	// Marking again keeps the IP and the transition times.
	if err := MarkPodsRunningReady(t.Context(), c, pod); err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(pod), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.PodIP != firstIP || firstIP == "" {
		t.Errorf("PodIP = %q after second mark, first %q", got.Status.PodIP, firstIP)
	}
	type condition struct {
		Type   corev1.PodConditionType
		Status corev1.ConditionStatus
	}
	var conds []condition
	for _, c := range got.Status.Conditions {
		conds = append(conds, condition{c.Type, c.Status})
	}
	want := []condition{
		{corev1.PodScheduled, corev1.ConditionTrue},
		{corev1.PodInitialized, corev1.ConditionTrue},
		{corev1.ContainersReady, corev1.ConditionTrue},
		{corev1.PodReady, corev1.ConditionTrue},
	}
	if diff := cmp.Diff(want, conds); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if got.Status.Phase != corev1.PodRunning {
		t.Errorf("phase = %s, want Running", got.Status.Phase)
	}
	if n := len(got.Status.ContainerStatuses); n != 1 || !got.Status.ContainerStatuses[0].Ready {
		t.Errorf("container statuses = %+v, want one ready", got.Status.ContainerStatuses)
	}
}

func TestPodIPIsStableAndDistinct(t *testing.T) {
	a := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	b := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}}
	again := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	if podIP(a) != podIP(again) {
		t.Error("podIP is not deterministic")
	}
	if podIP(a) == podIP(b) {
		t.Errorf("pods a and b share IP %s", podIP(a))
	}
}

// TestTerminateContainer: the sidecar's exit is recorded as a kubelet does
// it, the other container keeps running and the pod stays Running.
func TestTerminateContainer(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "ray-head", Image: "rayproject/ray"}, {Name: "ray-job-submitter", Image: "rayproject/ray"},
		}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod).WithStatusSubresource(&corev1.Pod{}).Build()
	if err := MarkPodsRunningReady(t.Context(), c, pod); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	if err := TerminateContainer(t.Context(), c, pod, "ray-job-submitter", 1, at); err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Phase      corev1.PodPhase
		Conditions map[corev1.PodConditionType]corev1.ConditionStatus
		Ready      map[string]bool
		Exit       map[string]string
	}
	got := summary{Phase: pod.Status.Phase, Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{},
		Ready: map[string]bool{}, Exit: map[string]string{}}
	for _, cond := range pod.Status.Conditions {
		got.Conditions[cond.Type] = cond.Status
	}
	for _, cs := range pod.Status.ContainerStatuses {
		got.Ready[cs.Name] = cs.Ready
		if term := cs.State.Terminated; term != nil {
			got.Exit[cs.Name] = fmt.Sprintf("%d %s %s", term.ExitCode, term.Reason, term.FinishedAt.UTC().Format(time.RFC3339))
		}
	}
	want := summary{
		Phase: corev1.PodRunning,
		Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{
			corev1.PodScheduled: corev1.ConditionTrue, corev1.PodInitialized: corev1.ConditionTrue,
			corev1.ContainersReady: corev1.ConditionFalse, corev1.PodReady: corev1.ConditionFalse,
		},
		Ready: map[string]bool{"ray-head": true, "ray-job-submitter": false},
		Exit:  map[string]string{"ray-job-submitter": "1 Error 2026-11-01T12:00:00Z"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod after the sidecar's exit (-want +got):\n%s", diff)
	}
}
