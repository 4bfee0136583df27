package podworker

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/containerlog"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// startContainer starts the next attempt of c.
func (w *Worker) startContainer(ctx context.Context, c *ctr) {
	pod := w.Pod()
	now := w.deps.Clock.Now()
	in, err := w.deps.Inputs.Container(ctx, pod, &c.spec, c.img, w.vols, w.facts())
	if err != nil {
		w.startFailed(c, asWaiting(err, reasonConfigError))
		return
	}
	if !c.pull.fresh { // else the pull's own Pulled event said it
		w.deps.Recorder.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine (local: %s)", c.spec.Image, c.img.Local)
	}
	c.pull.fresh = false
	attempt := c.attempts
	spec := containerSpecFor(&c.spec, c.img, in, attempt)
	if refusal := applySecurityContext(&spec, pod, &c.spec, c.img, w.deps.Node.SeccompDir); refusal != nil {
		w.startFailed(c, refusal)
		return
	}
	spec.TmpSizeBytes = tmpSize(&c.spec, w.deps.Node.Allocatable)
	spec.LogPath, err = containerlog.Create(w.sandbox().Dir(), c.spec.Name, attempt)
	if err != nil {
		w.startFailed(c, &waitingError{Reason: "CreateContainerError", Message: err.Error()})
		return
	}
	p, err := w.sandbox().Start(ctx, spec)
	if err != nil {
		w.startFailed(c, &waitingError{Reason: "RunContainerError", Message: err.Error()})
		return
	}
	if c.attempts > 0 {
		w.crashLoop.restarted(c.spec.Name, c.last.FinishedAt.Time)
	}
	c.proc, c.env, c.workingDir, c.logPath, c.attempts = p, in.Env, spec.WorkingDir, spec.LogPath, c.attempts+1
	c.waiting, c.notBefore = nil, now
	w.retries.reset(c.spec.Name)
	w.deps.Recorder.Eventf(pod, corev1.EventTypeNormal, "Created", "Created container %s", c.spec.Name)
	w.deps.Recorder.Eventf(pod, corev1.EventTypeNormal, "Started", "Started container %s", c.spec.Name)
	w.watchExit(c, p)
	w.afterStart(c, p)
}

// startFailed leaves c waiting with reason and schedules a retry.
func (w *Worker) startFailed(c *ctr, reason *waitingError) {
	c.waiting = reason
	now := w.deps.Clock.Now()
	c.notBefore = now.Add(w.retries.next(c.spec.Name, now))
	w.deps.Recorder.Eventf(w.Pod(), corev1.EventTypeWarning, "Failed", "Error: %s", reason.Message)
}

// watchExit reports the end of p to the worker.
func (w *Worker) watchExit(c *ctr, p Process) {
	w.goTracked(func() {
		select {
		case <-p.Done():
		case <-w.done:
			return
		}
		w.post(func() { w.exited(c, p) })
	})
}

// afterStart runs the postStart hook, then starts the probes; the
// container counts as started once the hook and the startup probe passed.
func (w *Worker) afterStart(c *ctr, p Process) {
	probeCtx, cancel := context.WithCancel(context.Background())
	c.stopProbes = cancel
	c.postStartDone = c.spec.Lifecycle == nil || c.spec.Lifecycle.PostStart == nil
	if c.postStartDone {
		w.startProbes(probeCtx, c, p)
		return
	}
	hook := c.spec.Lifecycle.PostStart.DeepCopy()
	target := w.hookTarget(c, p)
	w.goTracked(func() {
		err := w.runHandler(probeCtx, target, hook, 0)
		w.post(func() { w.postStartFinished(probeCtx, c, p, err) })
	})
}

// postStartFinished starts probing, or kills the container when its
// postStart hook failed.
func (w *Worker) postStartFinished(ctx context.Context, c *ctr, p Process, err error) {
	if c.proc != p {
		return
	}
	if err != nil {
		pod := w.Pod()
		w.deps.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedPostStartHook", "PostStartHook failed: %v", err)
		w.kill(c, "FailedPostStartHook")
		return
	}
	c.postStartDone = true
	w.startProbes(ctx, c, p)
}

// containerSpecFor maps a Kubernetes container onto a sandbox start, but
// for what its securityContext decides (applySecurityContext).
func containerSpecFor(c *corev1.Container, img Image, in ContainerInputs, attempt int) sandbox.ContainerSpec {
	spec := sandbox.ContainerSpec{
		Name:       c.Name,
		Attempt:    attempt,
		Args:       in.Args,
		Env:        in.Env,
		WorkingDir: c.WorkingDir,
		Mounts:     append(imageMounts(img), in.Mounts...),
		TTY:        c.TTY,
		OpenStdin:  c.Stdin,
		StdinOnce:  c.StdinOnce,
	}
	if spec.WorkingDir == "" {
		spec.WorkingDir = img.WorkingDir
	}
	spec.ImageRoot = img.RootFS
	if mem, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		spec.MemoryLimitBytes = mem.Value()
	}
	if cpu, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		spec.CPUMillis = cpu.MilliValue()
	}
	// As a kubelet: the request, or the limit when only it is given.
	shares := c.Resources.Requests.Cpu()
	if shares.IsZero() {
		shares = c.Resources.Limits.Cpu()
	}
	spec.CPUShares = cpuShares(shares.MilliValue())
	return spec
}

func capNames(caps []corev1.Capability) []string {
	out := make([]string, 0, len(caps))
	for _, c := range caps {
		out = append(out, string(c))
	}
	return out
}

// imageMounts are the image's read-only mounts, which the pod's volumes may
// cover.
func imageMounts(img Image) []sandbox.Mount {
	var out []sandbox.Mount
	for _, m := range img.Mounts {
		out = append(out, sandbox.Mount{Source: m.Source, Destination: m.Destination, ReadOnly: true})
	}
	return out
}
