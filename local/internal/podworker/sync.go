package podworker

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
)

// canSync tells whether the pod may start anything: it was admitted, and
// its sandbox exists or every image resolved (until then a pod whose image
// has no local equivalent, or is being pulled, waits; an update of the
// image may free it).
func (w *Worker) canSync() bool {
	if !w.state.admission.Admitted() {
		return false
	}
	if w.state.sandboxReady {
		return true
	}
	for _, c := range w.allCtrs() {
		if !c.imagePresent() {
			return false
		}
	}
	return true
}

// sync starts whatever should run now: the sandbox and volumes, then the
// init containers in order, then the containers.
func (w *Worker) sync(ctx context.Context) {
	if w.state.terminalPhase != "" {
		return
	}
	if !w.state.sandboxReady && !w.setup(ctx) {
		return
	}
	w.refreshVolumes(ctx)
	if !w.syncInit(ctx) {
		return
	}
	for _, c := range w.mainCtrs {
		w.ensure(ctx, c)
	}
	if phase := podPhase(w.Pod(), w.containerStatuses(w.initCtrs), w.containerStatuses(w.mainCtrs), w.state.initialized); phase == corev1.PodSucceeded || phase == corev1.PodFailed {
		w.complete(ctx, phase)
	}
}

// setup creates the sandbox and writes the volumes, retrying with back-off
// while a source is missing. It returns true once both exist.
func (w *Worker) setup(ctx context.Context) bool {
	now := w.deps.Clock.Now()
	if now.Before(w.state.notBefore) {
		return false
	}
	pod := w.Pod()
	err := w.createSandbox(ctx, pod)
	if err == nil {
		err = w.writeVolumes(ctx, pod)
	}
	if err != nil {
		w.state.setupErr = asWaiting(err, reasonContainerCreating)
		w.state.notBefore = now.Add(w.retries.next(setupKey, now))
		w.deps.Recorder.Event(pod, corev1.EventTypeWarning, "FailedMount", err.Error())
		w.log.Info("Pod setup failed, will retry", "err", err, "at", w.state.notBefore)
		return false
	}
	w.state.setupErr, w.state.notBefore = nil, time.Time{}
	w.state.sandboxReady = true
	w.adopt(ctx)
	return true
}

// createSandbox creates the pod's sandbox once.
func (w *Worker) createSandbox(ctx context.Context, pod *corev1.Pod) error {
	if w.sandbox() != nil {
		return nil
	}
	sb, err := w.deps.Runtime.CreateSandbox(ctx, sandboxSpecFor(pod, w.deps.Node, w.deps.Limits.WithDefaults(), w.state.admission.HostUsers))
	if err != nil {
		return fmt.Errorf("creating the pod sandbox: %w", err)
	}
	w.mu.Lock()
	w.sb = sb
	w.mu.Unlock()
	return nil
}

// writeVolumes writes the pod's volumes once.
func (w *Worker) writeVolumes(ctx context.Context, pod *corev1.Pod) error {
	if w.vols != nil {
		return nil
	}
	sb := w.sandbox()
	vols, err := w.deps.Inputs.Volumes(ctx, pod, filepath.Join(sb.Dir(), "volumes"), w.facts())
	if err != nil {
		return err
	}
	w.vols = vols
	return nil
}

// facts are the pod's downward-API facts.
func (w *Worker) facts() podinputs.PodFacts {
	f := podinputs.PodFacts{
		HostIP:            w.deps.Node.HostIP,
		NodeName:          w.deps.Node.Name,
		NodeAllocatable:   w.deps.Node.Allocatable,
		KubernetesService: w.deps.Node.KubernetesService,
		HostAccess:        w.deps.HostAccess,
	}
	if sb := w.sandbox(); sb != nil {
		f.PodIP = sb.IP()
		gid := uint32(0)
		if sc := w.Pod().Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
			gid = uint32(*sc.FSGroup)
		}
		uid, hostGID := sb.HostIDs(0, gid)
		f.VolumeOwner = &podinputs.Owner{UID: uid, GID: hostGID}
	}
	return f
}

// syncInit runs the init containers in order; it returns true once all of
// them completed (sidecars: started) and the containers may start.
func (w *Worker) syncInit(ctx context.Context) bool {
	for _, c := range w.initCtrs {
		switch {
		case c.kind == kindSidecar:
			w.ensure(ctx, c)
			if !c.started && !w.state.initialized {
				return false
			}
		case w.state.initialized || c.succeeded():
			continue
		case c.finished():
			return false // failed for good: podPhase reports Failed
		default:
			w.ensure(ctx, c)
			return false
		}
	}
	w.state.initialized = true
	return true
}

// ensure starts a container that should run and is due.
func (w *Worker) ensure(ctx context.Context, c *ctr) {
	if c.running() || c.finished() || !c.imagePresent() {
		return
	}
	if w.deps.Clock.Now().Before(c.notBefore) {
		return
	}
	if c.attempts > 0 && c.img.Registry && c.spec.ImagePullPolicy == corev1.PullAlways && !c.pull.fresh {
		// As a kubelet: Always pulls before every start, restarts too.
		w.startPull(c, c.img)
		return
	}
	w.startContainer(ctx, c)
}

// exited records that an attempt of c ended and decides on its restart.
func (w *Worker) exited(c *ctr, p Process) {
	if c.proc != p {
		return
	}
	if c.stopProbes != nil {
		c.stopProbes()
	}
	c.proc, c.started, c.ready, c.stopping = nil, false, false, false
	term := terminatedState(p)
	if w.state.terminalPhase != "" || (!c.specChanged && !c.shouldRestart(&w.Pod().Spec, term.ExitCode)) {
		c.term = term
		return
	}
	c.last, c.term = term, nil
	if c.specChanged { // restarted at once with its new spec, whatever the policy
		c.specChanged, c.notBefore = false, w.deps.Clock.Now()
		return
	}
	c.notBefore = w.crashLoop.readyAt(c.spec.Name, p.FinishedAt())
	if c.notBefore.After(w.deps.Clock.Now()) {
		c.waiting = &waitingError{
			Reason:  reasonCrashLoopBackOff,
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", w.crashLoop.delay(c.spec.Name), c.spec.Name, podRef(w.Pod())),
		}
		w.deps.Recorder.Eventf(w.Pod(), corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s", c.spec.Name, podRef(w.Pod()))
	}
}

// podRef formats a pod as a kubelet's messages do: name_namespace(uid).
func podRef(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// DefaultSyncFrequency is how often configMap, secret, downwardAPI and
// projected volumes are rewritten when Deps.SyncFrequency is zero: the
// kubelet's syncFrequency default (a kubelet resyncs a pod about every
// minute). Tokens are renewed by podinputs before 80 % of their lifetime.
const DefaultSyncFrequency = time.Minute

// refreshVolumes rewrites the pod's refreshable volumes when due.
func (w *Worker) refreshVolumes(ctx context.Context) {
	now := w.deps.Clock.Now()
	if w.vols == nil || !hasRefreshableVolumes(w.Pod()) || now.Before(w.state.nextRefresh) {
		return
	}
	if !w.state.nextRefresh.IsZero() {
		if err := w.vols.Refresh(ctx, w.Pod(), w.facts()); err != nil {
			w.log.Info("Refreshing volumes failed, will retry", "err", err)
		}
	}
	w.state.nextRefresh = now.Add(w.deps.syncFrequency())
}

// hasRefreshableVolumes tells whether pod has volumes whose content follows
// API objects.
func hasRefreshableVolumes(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil || v.Secret != nil || v.Projected != nil || v.DownwardAPI != nil {
			return true
		}
	}
	return false
}
