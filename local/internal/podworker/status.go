package podworker

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// status computes the pod's status as a kubelet writes it, from the
// worker's state.
func (w *Worker) status(pod *corev1.Pod) corev1.PodStatus {
	if !w.state.admission.Admitted() {
		return refusedStatus(pod, w.state.admission.Reason, w.state.admission.Message)
	}
	initStatuses := w.containerStatuses(w.initCtrs)
	mainStatuses := w.containerStatuses(w.mainCtrs)
	st := corev1.PodStatus{
		Phase:                 w.state.terminalPhase,
		HostIP:                w.deps.Node.HostIP.String(),
		HostIPs:               []corev1.HostIP{{IP: w.deps.Node.HostIP.String()}},
		StartTime:             ptr.To(metav1.NewTime(w.state.startTime)),
		QOSClass:              pod.Status.QOSClass,
		InitContainerStatuses: initStatuses,
		ContainerStatuses:     mainStatuses,
	}
	if st.Phase == "" || w.anyRunning() {
		// As a kubelet, a pod is not terminal before its containers
		// stopped (virtual-kubelet writes no status after a terminal one).
		st.Phase = podPhase(pod, initStatuses, mainStatuses, w.state.initialized)
	}
	st.Reason, st.Message = w.state.reason, w.state.message
	if sb := w.sandbox(); sb != nil {
		st.PodIP = sb.IP().String()
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
	st.Conditions = w.conditions(pod, &st)
	return st
}

// anyRunning tells whether an attempt of a container still runs.
func (w *Worker) anyRunning() bool {
	for _, c := range w.allCtrs() {
		if c.running() {
			return true
		}
	}
	return false
}

// containerStatuses reports cs in spec order.
func (w *Worker) containerStatuses(cs []*ctr) []corev1.ContainerStatus {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, 0, len(cs))
	for _, c := range cs {
		out = append(out, w.containerStatus(c))
	}
	return out
}

// containerStatus reports one container.
func (w *Worker) containerStatus(c *ctr) corev1.ContainerStatus {
	s := corev1.ContainerStatus{
		Name:         c.spec.Name,
		Image:        c.spec.Image,
		ImageID:      c.img.ID,
		RestartCount: c.restartCount(),
		Ready:        c.running() && c.started && c.ready,
		Started:      ptr.To(c.running() && c.started),
	}
	if c.last != nil {
		s.LastTerminationState.Terminated = c.last.DeepCopy()
	}
	switch {
	case c.running():
		s.ContainerID = containerID(c.proc)
		s.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.proc.StartedAt())}
	case c.term != nil:
		s.ContainerID = c.term.ContainerID
		s.State.Terminated = c.term.DeepCopy()
	default:
		s.State.Waiting = w.waitingState(c)
		if c.last != nil {
			s.ContainerID = c.last.ContainerID
		}
	}
	return s
}

// waitingState says why c does not run.
func (w *Worker) waitingState(c *ctr) *corev1.ContainerStateWaiting {
	switch {
	case c.imageErr != nil:
		return &corev1.ContainerStateWaiting{Reason: c.imageErr.Reason, Message: c.imageErr.Message}
	case c.waiting != nil:
		return &corev1.ContainerStateWaiting{Reason: c.waiting.Reason, Message: c.waiting.Message}
	case c.kind == kindMain && len(w.initCtrs) > 0 && !w.state.initialized:
		return &corev1.ContainerStateWaiting{Reason: reasonPodInitializing}
	case c.kind != kindMain && !w.state.sandboxReady:
		return &corev1.ContainerStateWaiting{Reason: reasonPodInitializing}
	default:
		return &corev1.ContainerStateWaiting{Reason: reasonContainerCreating}
	}
}

// podPhase computes a running pod's phase from its container statuses, as
// a kubelet of 1.36 does (ContainerRestartRules on): a stopped container
// counts as restarting when its restart rules and policies say it restarts
// after its exit code, whatever the pod's restart policy.
func podPhase(pod *corev1.Pod, initStatuses, mainStatuses []corev1.ContainerStatus, initialized bool) corev1.PodPhase {
	if initFailedForGood(pod, initStatuses) {
		return corev1.PodFailed
	}
	if !initialized {
		return corev1.PodPending
	}
	var running, waiting, stopped, stoppedForGood, succeeded int
	for _, s := range mainStatuses {
		exit := s.State.Terminated
		switch {
		case s.State.Running != nil:
			running++
			continue
		case exit != nil:
			if exit.ExitCode == 0 {
				succeeded++
			}
		case s.LastTerminationState.Terminated != nil:
			exit = s.LastTerminationState.Terminated
		default:
			waiting++
			continue
		}
		stopped++
		if c := specOf(pod.Spec.Containers, s.Name); c == nil || !containerShouldRestart(c, &pod.Spec, exit.ExitCode) {
			stoppedForGood++
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped == 0:
		return corev1.PodPending
	case stopped != stoppedForGood: // some container is restarting
		return corev1.PodRunning
	case stopped == succeeded:
		return corev1.PodSucceeded
	default:
		return corev1.PodFailed
	}
}

// initFailedForGood tells whether a regular init container failed and will
// not restart: the pod has failed.
func initFailedForGood(pod *corev1.Pod, initStatuses []corev1.ContainerStatus) bool {
	for _, s := range initStatuses {
		c := specOf(pod.Spec.InitContainers, s.Name)
		if c == nil || (c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways) {
			continue
		}
		exit := s.State.Terminated
		if exit == nil && s.State.Waiting != nil {
			exit = s.LastTerminationState.Terminated
		}
		if exit != nil && exit.ExitCode != 0 && !containerShouldRestart(c, &pod.Spec, exit.ExitCode) {
			return true
		}
	}
	return false
}

// specOf returns the container named name, nil if none.
func specOf(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

// podPhaseTerminal is the phase of a pod whose containers were all stopped
// (deleted): Succeeded when every container exited 0, else Failed.
func podPhaseTerminal(mainStatuses []corev1.ContainerStatus) corev1.PodPhase {
	for _, s := range mainStatuses {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
			return corev1.PodFailed
		}
	}
	return corev1.PodSucceeded
}

// OwnsCondition tells whether the node writes pod conditions of type t;
// the others (PodScheduled, the conditions of readiness gates) belong to
// whoever set them, and the node keeps them as it finds them.
func OwnsCondition(t corev1.PodConditionType) bool {
	switch t {
	case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady:
		return true
	default:
		return false
	}
}

// conditions computes the kubelet-owned conditions and keeps the others.
func (w *Worker) conditions(pod *corev1.Pod, st *corev1.PodStatus) []corev1.PodCondition {
	owned := []corev1.PodCondition{
		boolCondition(corev1.PodReadyToStartContainers, w.state.sandboxReady, "", ""),
		w.initializedCondition(st),
		podReadyCondition(pod, st),
		readyCondition(corev1.ContainersReady, st),
	}
	out := make([]corev1.PodCondition, 0, len(owned)+len(pod.Status.Conditions))
	now := metav1.NewTime(w.deps.Clock.Now())
	for _, c := range owned {
		prev, ok := w.state.conditions[c.Type]
		c.LastTransitionTime = now
		if ok && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
		w.state.conditions[c.Type] = c
		out = append(out, c)
	}
	for _, c := range pod.Status.Conditions {
		if !OwnsCondition(c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// initializedCondition is True once every init container completed (or,
// for sidecars, started).
func (w *Worker) initializedCondition(st *corev1.PodStatus) corev1.PodCondition {
	if w.state.initialized {
		reason := ""
		if st.Phase == corev1.PodSucceeded {
			reason = reasonPodCompleted
		}
		return boolCondition(corev1.PodInitialized, true, reason, "")
	}
	var pending []string
	for _, c := range w.initCtrs {
		if (c.kind == kindSidecar && !c.started) || (c.kind == kindInit && !c.succeeded()) {
			pending = append(pending, c.spec.Name)
		}
	}
	return boolCondition(corev1.PodInitialized, false, reasonContainersNotInited, fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(pending, " ")))
}

// readyCondition computes Ready or ContainersReady from the readiness of
// the containers and sidecars.
func readyCondition(t corev1.PodConditionType, st *corev1.PodStatus) corev1.PodCondition {
	if st.Phase == corev1.PodSucceeded {
		return boolCondition(t, false, reasonPodCompleted, "")
	}
	var unready []string
	for _, s := range st.ContainerStatuses {
		if !s.Ready {
			unready = append(unready, s.Name)
		}
	}
	for _, s := range st.InitContainerStatuses {
		if s.Started != nil && !s.Ready && s.State.Running != nil {
			unready = append(unready, s.Name)
		}
	}
	if len(unready) > 0 {
		return boolCondition(t, false, reasonContainersNotReady, fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " ")))
	}
	return boolCondition(t, true, "", "")
}

// podReadyCondition is Ready: ContainersReady, and, once the containers
// are ready, every readiness gate's condition True.
func podReadyCondition(pod *corev1.Pod, st *corev1.PodStatus) corev1.PodCondition {
	c := readyCondition(corev1.PodReady, st)
	if c.Status != corev1.ConditionTrue {
		return c
	}
	if unmet := unmetReadinessGates(pod); len(unmet) > 0 {
		return boolCondition(corev1.PodReady, false, reasonReadinessGatesNotReady, strings.Join(unmet, ", "))
	}
	return c
}

// unmetReadinessGates says, in spec order, which of the pod's readiness
// gates lack a True condition (set by others through the status API).
func unmetReadinessGates(pod *corev1.Pod) []string {
	var unmet []string
	for _, g := range pod.Spec.ReadinessGates {
		c := findCondition(pod.Status.Conditions, g.ConditionType)
		switch {
		case c == nil:
			unmet = append(unmet, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
		case c.Status != corev1.ConditionTrue:
			unmet = append(unmet, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %s", g.ConditionType, c.Status))
		}
	}
	return unmet
}

func findCondition(cs []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func boolCondition(t corev1.PodConditionType, ok bool, reason, message string) corev1.PodCondition {
	s := corev1.ConditionFalse
	if ok {
		s = corev1.ConditionTrue
	}
	return corev1.PodCondition{Type: t, Status: s, Reason: reason, Message: message}
}
