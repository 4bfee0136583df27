package podworker

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The reason and message of a pod that outlived its activeDeadlineSeconds,
// as a kubelet writes them.
const (
	reasonDeadlineExceeded  = "DeadlineExceeded"
	messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// activeDeadline is when the pod's activeDeadlineSeconds, counted from its
// start time, runs out; zero when it has none. The latest spec counts: an
// update may lower it.
func (w *Worker) activeDeadline() time.Time {
	seconds := w.Pod().Spec.ActiveDeadlineSeconds
	if seconds == nil {
		return time.Time{}
	}
	return w.state.startTime.Add(time.Duration(*seconds) * time.Second)
}

// enforceDeadline fails the pod once its active deadline has passed: the
// phase becomes Failed with reason DeadlineExceeded, and every running
// container is stopped with the pod's grace period and not restarted.
func (w *Worker) enforceDeadline() {
	deadline := w.activeDeadline()
	if w.state.terminalPhase != "" || deadline.IsZero() || w.deps.Clock.Now().Before(deadline) {
		return
	}
	w.state.terminalPhase = corev1.PodFailed
	w.state.reason, w.state.message = reasonDeadlineExceeded, messageDeadlineExceeded
	w.deps.Recorder.Event(w.Pod(), corev1.EventTypeNormal, reasonDeadlineExceeded, messageDeadlineExceeded)
	for _, c := range w.allCtrs() {
		w.kill(c, "Stopping container "+c.spec.Name)
	}
}
