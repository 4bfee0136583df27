package podworker

import (
	"context"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

const defaultGrace = 30 * time.Second

// kill stops c in the background with the pod's grace period; its exit
// then restarts it per policy.
func (w *Worker) kill(c *ctr, message string) {
	w.killWithGrace(c, message, nil)
}

// killWithGrace stops c in the background (preStop, SIGTERM, grace,
// SIGKILL); grace nil means the pod's terminationGracePeriodSeconds.
func (w *Worker) killWithGrace(c *ctr, message string, grace *int64) {
	if c.proc == nil || c.stopping {
		return
	}
	c.stopping = true
	if c.stopProbes != nil {
		c.stopProbes()
	}
	pod := w.Pod()
	w.deps.Recorder.Eventf(pod, corev1.EventTypeNormal, "Killing", "%s", message)
	g := podGrace(pod)
	if grace != nil {
		g = time.Duration(*grace) * time.Second
	}
	deadline := w.deps.Clock.Now().Add(g)
	target, spec := w.hookTarget(c, c.proc), c.spec.DeepCopy()
	w.goTracked(func() { w.stopProcess(spec, target, deadline) })
}

// stopProcess runs the preStop hook, sends SIGTERM and sends SIGKILL at
// deadline if the process still runs. It returns once the process exited.
func (w *Worker) stopProcess(spec *corev1.Container, t handlerTarget, deadline time.Time) {
	clk := w.deps.Clock
	if spec.Lifecycle != nil && spec.Lifecycle.PreStop != nil {
		ctx, cancel := context.WithCancel(context.Background())
		hookDone := make(chan struct{})
		go func() {
			defer close(hookDone)
			if err := w.runHandler(ctx, t, spec.Lifecycle.PreStop, 0); err != nil {
				w.deps.Recorder.Eventf(w.Pod(), corev1.EventTypeWarning, "FailedPreStopHook", "PreStopHook failed: %v", err)
			}
		}()
		timer := clk.NewTimer(max(deadline.Sub(clk.Now()), 0))
		select {
		case <-hookDone:
		case <-t.proc.Done():
		case <-timer.C():
		}
		timer.Stop()
		cancel()
		<-hookDone
	}
	_ = t.proc.Signal(syscall.SIGTERM)
	timer := clk.NewTimer(max(deadline.Sub(clk.Now()), 0))
	defer timer.Stop()
	select {
	case <-t.proc.Done():
		return
	case <-timer.C():
	}
	_ = t.proc.Kill()
	<-t.proc.Done()
}

// complete ends a pod that succeeded or failed: no more restarts; sidecars
// stop in reverse order.
func (w *Worker) complete(_ context.Context, phase corev1.PodPhase) {
	w.state.terminalPhase = phase
	var sidecars []*ctr
	for i := len(w.initCtrs) - 1; i >= 0; i-- {
		if c := w.initCtrs[i]; c.running() && !c.stopping {
			c.stopping = true
			if c.stopProbes != nil {
				c.stopProbes()
			}
			sidecars = append(sidecars, c)
		}
	}
	if len(sidecars) == 0 {
		return
	}
	deadline := w.deps.Clock.Now().Add(podGrace(w.Pod()))
	type job struct {
		spec   *corev1.Container
		target handlerTarget
	}
	jobs := make([]job, 0, len(sidecars))
	for _, c := range sidecars {
		jobs = append(jobs, job{c.spec.DeepCopy(), w.hookTarget(c, c.proc)})
	}
	w.goTracked(func() {
		for _, j := range jobs {
			w.stopProcess(j.spec, j.target, deadline)
		}
	})
}

// terminate stops the pod as a deletion does: the containers (preStop,
// SIGTERM, grace, SIGKILL) in parallel, then the sidecars in reverse order,
// then the sandbox. When the pod was deleted it is then removed from the API.
func (w *Worker) terminate(ctx context.Context, deleted bool) {
	pod := w.Pod()
	deadline := w.deps.Clock.Now().Add(w.deletionGrace(pod))
	for _, c := range w.allCtrs() {
		if c.stopProbes != nil {
			c.stopProbes()
		}
	}
	w.stopAll(pod, w.mainCtrs, deadline)
	for i := len(w.initCtrs) - 1; i >= 0; i-- {
		w.stopAll(pod, w.initCtrs[i:i+1], deadline)
	}
	if w.state.terminalPhase == "" {
		w.state.terminalPhase = podPhaseTerminal(w.containerStatuses(w.mainCtrs))
	}
	w.publish()
	w.release(ctx)
	if deleted {
		w.deps.Finalize(ctx, w.Published())
	}
}

// stopAll stops the running containers of cs in parallel and records their
// exits.
func (w *Worker) stopAll(pod *corev1.Pod, cs []*ctr, deadline time.Time) {
	var wg sync.WaitGroup
	for _, c := range cs {
		if c.proc == nil {
			continue
		}
		if !c.stopping {
			w.deps.Recorder.Eventf(pod, corev1.EventTypeNormal, "Killing", "Stopping container %s", c.spec.Name)
		}
		spec, target := c.spec.DeepCopy(), w.hookTarget(c, c.proc)
		wg.Go(func() { w.stopProcess(spec, target, deadline) })
	}
	wg.Wait()
	for _, c := range cs {
		if c.proc != nil {
			c.term, c.proc, c.started, c.ready = terminatedState(c.proc), nil, false, false
		}
	}
}

// release destroys the sandbox and the volumes.
func (w *Worker) release(ctx context.Context) {
	if w.vols != nil {
		if err := w.vols.Release(); err != nil {
			w.log.Error(err, "Releasing volumes")
		}
	}
	if sb := w.sandbox(); sb != nil {
		if err := sb.Destroy(ctx); err != nil {
			w.log.Error(err, "Destroying the sandbox")
		}
	}
}

// deletionGrace is the grace period of a deletion.
func (w *Worker) deletionGrace(pod *corev1.Pod) time.Duration {
	w.mu.Lock()
	grace := w.grace
	w.mu.Unlock()
	if grace != nil {
		return time.Duration(*grace) * time.Second
	}
	if pod.DeletionGracePeriodSeconds != nil {
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	return podGrace(pod)
}

// podGrace is the pod's terminationGracePeriodSeconds.
func podGrace(pod *corev1.Pod) time.Duration {
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return defaultGrace
}
