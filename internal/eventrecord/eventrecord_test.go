package eventrecord

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
)

// TestEventf: a Recorder passes events on to its recorder, and one without
// a recorder records nothing and does not fail.
func TestEventf(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	fake := events.NewFakeRecorder(1)
	New(fake).Eventf(pod, nil, corev1.EventTypeWarning, "Reason", "Action", "%s/%s: %d", "ns", "p", 3)
	select {
	case got := <-fake.Events:
		if want := "Warning Reason ns/p: 3"; got != want {
			t.Errorf("recorded %q, want %q", got, want)
		}
	default:
		t.Error("recorded nothing")
	}
	Recorder{}.Eventf(pod, nil, corev1.EventTypeNormal, "Reason", "Action", "note")
	New(nil).Eventf(pod, nil, corev1.EventTypeNormal, "Reason", "Action", "note")
}
