package podworker

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// probeKind names a probe as a kubelet's events do.
type probeKind string

const (
	probeStartup   probeKind = "Startup"
	probeLiveness  probeKind = "Liveness"
	probeReadiness probeKind = "Readiness"
)

// startProbes runs the startup probe, or marks the container started and
// runs its liveness and readiness probes.
func (w *Worker) startProbes(ctx context.Context, c *ctr, p Process) {
	if c.spec.StartupProbe != nil {
		w.runProbe(ctx, c, p, probeStartup, c.spec.StartupProbe)
		return
	}
	w.containerStarted(ctx, c, p)
}

// containerStarted marks c started and begins liveness and readiness probes.
func (w *Worker) containerStarted(ctx context.Context, c *ctr, p Process) {
	c.started = true
	c.ready = c.spec.ReadinessProbe == nil
	if c.spec.LivenessProbe != nil {
		w.runProbe(ctx, c, p, probeLiveness, c.spec.LivenessProbe)
	}
	if c.spec.ReadinessProbe != nil {
		w.runProbe(ctx, c, p, probeReadiness, c.spec.ReadinessProbe)
	}
}

// runProbe starts the goroutine of one probe of one attempt.
func (w *Worker) runProbe(ctx context.Context, c *ctr, p Process, kind probeKind, probe *corev1.Probe) {
	pr := &prober{w: w, c: c, p: p, kind: kind, probe: probe.DeepCopy(), target: w.hookTarget(c, p)}
	w.goTracked(func() { pr.loop(ctx) })
}

// prober runs one probe periodically and reports threshold crossings to
// the worker. It reads nothing of the container's state but its own copies.
type prober struct {
	w      *Worker
	c      *ctr // only passed back to the worker
	p      Process
	kind   probeKind
	probe  *corev1.Probe
	target handlerTarget

	successes, failures int32
	reported            *bool // last readiness reported
}

// loop waits initialDelaySeconds, then probes every periodSeconds.
func (pr *prober) loop(ctx context.Context) {
	clk := pr.w.deps.Clock
	if sleepCtx(ctx, clk, time.Duration(pr.probe.InitialDelaySeconds)*time.Second) != nil {
		return
	}
	ticker := clk.NewTicker(time.Duration(orDefault(pr.probe.PeriodSeconds, 10)) * time.Second)
	defer ticker.Stop()
	for {
		if pr.once(ctx) {
			return
		}
		select {
		case <-ticker.C():
		case <-ctx.Done():
			return
		}
	}
}

// once runs the probe one time; it returns true when the probe is over
// (startup decided, liveness failed).
func (pr *prober) once(ctx context.Context) bool {
	timeout := time.Duration(orDefault(pr.probe.TimeoutSeconds, 1)) * time.Second
	err := runProbeHandler(ctx, pr.target, &pr.probe.ProbeHandler, timeout)
	if ctx.Err() != nil {
		return true
	}
	if err == nil {
		pr.successes, pr.failures = pr.successes+1, 0
	} else {
		pr.successes, pr.failures = 0, pr.failures+1
		pr.w.deps.Recorder.Eventf(pr.w.Pod(), corev1.EventTypeWarning, "Unhealthy", "%s probe failed: %v", pr.kind, err)
	}
	passed := pr.successes >= orDefault(pr.probe.SuccessThreshold, 1)
	failed := pr.failures >= orDefault(pr.probe.FailureThreshold, 3)
	switch pr.kind {
	case probeStartup:
		return pr.report(ctx, passed, failed)
	case probeLiveness:
		return failed && pr.report(ctx, false, true)
	default:
		pr.readiness(passed, failed)
		return false
	}
}

// report posts the startup or liveness outcome to the worker.
func (pr *prober) report(ctx context.Context, passed, failed bool) bool {
	switch {
	case passed:
		pr.w.post(func() {
			if pr.c.proc == pr.p {
				pr.w.containerStarted(ctx, pr.c, pr.p)
			}
		})
	case failed:
		pr.w.post(func() { pr.w.probeKill(pr.c, pr.p, pr.kind, pr.probe) })
	default:
		return false
	}
	return true
}

// readiness posts a change of readiness to the worker.
func (pr *prober) readiness(passed, failed bool) {
	var ready bool
	switch {
	case passed:
		ready = true
	case failed:
		ready = false
	default:
		return
	}
	if pr.reported != nil && *pr.reported == ready {
		return
	}
	pr.reported = &ready
	pr.w.post(func() {
		if pr.c.proc == pr.p {
			pr.c.ready = ready
		}
	})
}

// probeKill restarts a container whose liveness or startup probe failed.
func (w *Worker) probeKill(c *ctr, p Process, kind probeKind, probe *corev1.Probe) {
	if c.proc != p || c.stopping {
		return
	}
	grace := probe.TerminationGracePeriodSeconds
	w.killWithGrace(c, "Container "+c.spec.Name+" failed "+lower(kind)+" probe, will be restarted", grace)
}

func lower(k probeKind) string {
	if k == probeStartup {
		return "startup"
	}
	return "liveness"
}

func orDefault(v, def int32) int32 {
	if v <= 0 {
		return def
	}
	return v
}
