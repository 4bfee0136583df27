package node

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestStatusWriterKeepsOthersConditions(t *testing.T) {
	const gate corev1.PodConditionType = "example.com/lb"
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	inAPI := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			scheduled,
			{Type: gate, Status: corev1.ConditionTrue, Reason: "Registered"},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse},
		}},
	}
	client := fake.NewClientset(inAPI)
	// The node's copy predates the gate's condition.
	written := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u", ResourceVersion: "0"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: gate, Status: corev1.ConditionFalse},
			scheduled,
		}},
	}
	got, err := statusWriter{client.CoreV1()}.Pods("ns").UpdateStatus(t.Context(), written, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		scheduled,
		{Type: gate, Status: corev1.ConditionTrue, Reason: "Registered"},
	}}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("written status (-want +got):\n%s", diff)
	}

	other := written.DeepCopy()
	other.UID = "another"
	if _, err := (statusWriter{client.CoreV1()}).Pods("ns").UpdateStatus(t.Context(), other, metav1.UpdateOptions{}); err == nil {
		t.Error("wrote the status of another pod of the same name")
	}
}
