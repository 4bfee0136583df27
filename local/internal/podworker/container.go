package podworker

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ctrKind tells how a container takes part in the pod's lifecycle.
type ctrKind int

const (
	kindInit    ctrKind = iota // a regular init container: runs to completion, in order
	kindSidecar                // an init container with restartPolicy Always
	kindMain                   // a container of spec.containers
)

// ctr is the state of one container of a pod. Only the pod worker's
// goroutine reads or writes it.
type ctr struct {
	spec corev1.Container
	kind ctrKind
	img  Image
	// imageErr is set when the image failed to pull or has no local
	// equivalent (ErrImagePull, then ImagePullBackOff): the container does
	// not start until a retry (pull.go) or a new image succeeds.
	imageErr *waitingError
	pull     pullState

	proc Process
	// env and workingDir are those of the running attempt: commands run
	// in it (hooks, exec probes, kubectl exec) get them, as a CRI runtime
	// runs an exec with the container's process settings.
	env        []string
	workingDir string
	logPath    string // the running attempt's log
	attempts   int    // successful starts so far
	// term is the current terminated state when no restart will follow.
	term *corev1.ContainerStateTerminated
	// last is the previous attempt's terminated state (lastState).
	last *corev1.ContainerStateTerminated
	// waiting is the reason shown while the container is neither running
	// nor terminated (CrashLoopBackOff, CreateContainerConfigError...).
	waiting *waitingError
	// notBefore is the earliest time of the next start (back-off).
	notBefore time.Time

	postStartDone bool
	started       bool // startup probe passed (or none) and postStart done
	ready         bool
	stopping      bool // a kill is under way (liveness failure, pod completion)
	// specChanged marks a kill for a new spec: the container restarts
	// whatever the restart policy.
	specChanged bool
	stopProbes  context.CancelFunc
}

// newCtrs builds the container states of a pod, init containers first.
func newCtrs(pod *corev1.Pod) (initCtrs, mainCtrs []*ctr) {
	for _, c := range pod.Spec.InitContainers {
		kind := kindInit
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			kind = kindSidecar
		}
		initCtrs = append(initCtrs, &ctr{spec: c, kind: kind})
	}
	for _, c := range pod.Spec.Containers {
		mainCtrs = append(mainCtrs, &ctr{spec: c, kind: kindMain})
	}
	return initCtrs, mainCtrs
}

// restartCount is the number of restarts so far.
func (c *ctr) restartCount() int32 { return int32(max(c.attempts-1, 0)) }

// running tells whether an attempt of the container runs.
func (c *ctr) running() bool { return c.proc != nil }

// succeeded tells whether the container terminated with exit code 0 and
// will not restart.
func (c *ctr) succeeded() bool { return c.proc == nil && c.term != nil && c.term.ExitCode == 0 }

// finished tells whether the container terminated and will not restart.
func (c *ctr) finished() bool { return c.proc == nil && c.term != nil }

// shouldRestart tells whether a container that exited with code restarts
// (pod is the pod's spec): a sidecar always does, a regular init container
// only after a failure, and then, as the others, as its restart rules and
// policies say (containerShouldRestart). A container killed for a failed
// probe is judged by the kill's exit code too, as the kubelet's next sync
// judges the exited container.
func (c *ctr) shouldRestart(pod *corev1.PodSpec, code int32) bool {
	switch {
	case c.kind == kindSidecar:
		return true
	case c.kind == kindInit && code == 0:
		return false
	default:
		return containerShouldRestart(&c.spec, pod, code)
	}
}

// terminatedState describes an exited attempt as a kubelet does.
func terminatedState(p Process) *corev1.ContainerStateTerminated {
	code := int32(p.ExitCode())
	t := &corev1.ContainerStateTerminated{
		ExitCode:    code,
		Reason:      reasonError,
		StartedAt:   metav1.NewTime(p.StartedAt()),
		FinishedAt:  metav1.NewTime(p.FinishedAt()),
		ContainerID: containerID(p),
	}
	if code == 0 {
		t.Reason = reasonCompleted
	}
	if code > 128 && code < 128+65 {
		t.Signal = code - 128
	}
	return t
}

// containerID is the status' containerID of an attempt.
func containerID(p Process) string { return "runc://" + p.ID() }
