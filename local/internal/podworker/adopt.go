package podworker

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/containerlog"
)

// Adoptee is a container attempt the node found in a sandbox it adopted:
// the container runtime kept it running (or recorded its end) while no
// node agent watched, as containerd keeps a stopped kubelet's containers.
type Adoptee interface {
	Process
	// Name is the container's name in the pod.
	Name() string
	// Attempt is the restart count the attempt was started with.
	Attempt() int
}

// adopt takes over the attempts of an adopted sandbox and restores from the
// pod's status what the earlier node agent knew (restart counts, last
// states, finished init containers), as a restarted kubelet rebuilds its
// pods from the container runtime and the API server: a running attempt
// runs on, unrestarted; one that ended meanwhile is handled as an exit now
// (restartPolicy, back-off).
func (w *Worker) adopt(ctx context.Context) {
	adoptees := w.sandbox().Adopted()
	if len(adoptees) == 0 {
		return
	}
	pod := w.Pod()
	if st := pod.Status.StartTime; st != nil {
		w.state.startTime = st.Time
	}
	w.restoreFromStatus(pod)
	for _, a := range adoptees {
		c := w.ctrNamed(a.Name())
		if c == nil {
			// A container the pod no longer has: nothing reports on it.
			w.log.Info("Stopping an adopted container the pod does not have", "container", a.Name())
			_ = a.Kill()
			continue
		}
		w.adoptAttempt(ctx, pod, c, a)
	}
	w.log.Info("Adopted the pod's containers", "attempts", len(adoptees))
}

// restoreFromStatus sets restart counts, last states and finished states
// from the containers' statuses in the API, and whether the init
// containers are done.
func (w *Worker) restoreFromStatus(pod *corev1.Pod) {
	for _, c := range w.allCtrs() {
		st := apiStatusOf(pod, c.spec.Name)
		if st == nil || st.ContainerID == "" {
			continue
		}
		c.attempts = int(st.RestartCount) + 1
		c.last = st.LastTerminationState.Terminated.DeepCopy()
		c.term = st.State.Terminated.DeepCopy()
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodInitialized && cond.Status == corev1.ConditionTrue {
			w.state.initialized = true
		}
	}
}

// adoptAttempt makes a the running attempt of c, with the probes running
// and, when the status said so, c started and ready.
func (w *Worker) adoptAttempt(ctx context.Context, pod *corev1.Pod, c *ctr, a Adoptee) {
	was := apiStatusOf(pod, c.spec.Name)
	c.attempts = max(c.attempts, a.Attempt()+1)
	c.proc, c.term, c.waiting = a, nil, nil
	c.logPath = containerlog.Path(w.sandbox().Dir(), c.spec.Name, a.Attempt())
	if in, err := w.deps.Inputs.Container(ctx, pod, &c.spec, c.img, w.vols, w.facts()); err == nil {
		c.env, c.workingDir = in.Env, containerSpecFor(&c.spec, c.img, in, a.Attempt()).WorkingDir
	}
	c.postStartDone = true
	probeCtx, cancel := context.WithCancel(context.Background())
	c.stopProbes = cancel
	if was != nil && was.Started != nil && *was.Started {
		w.containerStarted(probeCtx, c, a)
		// Ready stays as the status said until a probe says otherwise.
		c.ready = c.ready || was.Ready
	} else {
		w.startProbes(probeCtx, c, a)
	}
	w.watchExit(c, a)
}

// ctrNamed is the container state of a container name, or nil.
func (w *Worker) ctrNamed(name string) *ctr {
	for _, c := range w.allCtrs() {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}

// apiStatusOf is the API status of a container of pod, or nil.
func apiStatusOf(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// deletedBeforeStart tells whether RequestDelete came before Start: the
// pod was deleted while no node agent ran.
func (w *Worker) deletedBeforeStart() bool {
	select {
	case <-w.deleted:
		return true
	default:
		return false
	}
}

// stopAdopted ends a pod that was deleted while no node agent ran, as a
// restarted kubelet ends a terminating pod: it starts nothing, takes over
// what the pod's adopted sandbox still runs (with its volumes, which its
// preStop hooks' environment may read), stops it within the deletion's
// grace period (preStop, SIGTERM, SIGKILL), removes the sandbox and then
// the pod object. A sandbox whose volumes cannot be written again is
// removed with whatever it runs.
func (w *Worker) stopAdopted(ctx context.Context) {
	pod := w.Pod()
	if w.state.admission.Admitted() && w.createSandbox(ctx, pod) == nil && w.writeVolumes(ctx, pod) == nil {
		w.state.sandboxReady = true
		w.adopt(ctx)
	}
	w.terminate(ctx, true)
}
