package podworker

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

// admit applies the node's host-access policy and its refusals of
// securityContext settings (securityRefusal) once, before anything of the
// pod exists, as a kubelet admits a pod: a refused pod fails at once with
// the refusal's reason and message and a Warning event, no container
// starts, and nothing retries it (its spec cannot change to fix it). It
// returns true when the pod may run.
func (w *Worker) admit() bool {
	pod := w.Pod()
	w.state.admission = w.deps.HostAccess.Admit(pod)
	if w.state.admission.Admitted() {
		if reason, message := securityRefusal(pod); reason != "" {
			w.state.admission = hostaccess.Verdict{Reason: reason, Message: message}
		}
	}
	v := w.state.admission
	if v.Admitted() {
		return true
	}
	w.state.terminalPhase = corev1.PodFailed
	w.deps.Recorder.Event(pod, corev1.EventTypeWarning, v.Reason, v.Message)
	w.log.Info("Refused the pod", "reason", v.Reason, "message", v.Message)
	return false
}

// refusedStatus is the status of a pod the node refused: Failed, with the
// refusal's reason and message. It keeps the conditions others set
// (PodScheduled) and says nothing of containers, which never existed.
func refusedStatus(pod *corev1.Pod, reason, message string) corev1.PodStatus {
	return corev1.PodStatus{
		Phase:      corev1.PodFailed,
		Reason:     reason,
		Message:    message,
		QOSClass:   pod.Status.QOSClass,
		Conditions: pod.Status.Conditions,
	}
}
