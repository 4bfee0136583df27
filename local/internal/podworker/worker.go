package podworker

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

// Worker runs one pod: it owns the pod's state, and only its goroutine
// changes it. Others talk to it through Update, RequestDelete and the
// kubelet API's queries (which post to the goroutine), and read the last
// published snapshot.
type Worker struct {
	deps *Deps
	log  logr.Logger

	mu        sync.Mutex
	pod       *corev1.Pod        // latest spec from the API
	snapshot  *corev1.Pod        // last published pod with status
	grace     *int64             // set by RequestDelete
	sb        Sandbox            // set once the sandbox exists
	published []RunningContainer // the running attempts publish last saw

	events  chan func()
	wake    chan struct{} // a new version of the pod arrived
	deleted chan struct{} // closed by RequestDelete
	delOnce sync.Once
	done    chan struct{}
	wg      sync.WaitGroup // goroutines the worker started

	// Owned by the worker goroutine.
	initCtrs, mainCtrs []*ctr
	vols               Volumes
	state              podState
	crashLoop          crashLoop
	retries            retries
	pullBackOff        retries
}

// podState is the pod-level part of what the worker observed.
type podState struct {
	startTime     time.Time
	admission     hostaccess.Verdict // the node's answer, once, before anything else
	sandboxReady  bool
	initialized   bool
	terminalPhase corev1.PodPhase // set once the pod succeeded or failed
	// reason and message say why the node failed the pod (DeadlineExceeded).
	reason, message string
	notBefore       time.Time // next setup attempt
	nextRefresh     time.Time // next rewrite of configMap, secret and projected volumes
	setupErr        *waitingError
	conditions      map[corev1.PodConditionType]corev1.PodCondition
}

// New makes the worker of pod; Start runs it.
func New(deps *Deps, pod *corev1.Pod) *Worker {
	w := &Worker{
		deps:    deps,
		log:     deps.Log.WithValues("pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID),
		pod:     pod.DeepCopy(),
		events:  make(chan func()),
		wake:    make(chan struct{}, 1),
		deleted: make(chan struct{}),
		done:    make(chan struct{}),
	}
	w.initCtrs, w.mainCtrs = newCtrs(pod)
	w.crashLoop, w.retries, w.pullBackOff = newCrashLoop(deps.Clock), newRetries(deps.Clock), newPullBackOff(deps.Clock)
	w.state.conditions = map[corev1.PodConditionType]corev1.PodCondition{}
	return w
}

// Start runs the worker until the pod is deleted or ctx ends.
func (w *Worker) Start(ctx context.Context) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.run(ctx)
	}()
}

// run is the worker's goroutine.
func (w *Worker) run(ctx context.Context) {
	defer close(w.done)
	w.state.startTime = w.deps.Clock.Now()
	if w.admit() {
		w.resolveImages()
	}
	if w.deletedBeforeStart() {
		w.stopAdopted(ctx)
		return
	}
	for {
		w.enforceDeadline()
		w.retryPulls()
		if w.canSync() {
			w.sync(ctx)
		}
		w.publish()
		timer := w.nextTimer()
		select {
		case f := <-w.events:
			f()
		case <-w.wake:
			w.applySpec()
		case <-timerC(timer):
		case <-w.deleted:
			stopTimer(timer)
			w.terminate(ctx, true)
			return
		case <-ctx.Done():
			stopTimer(timer)
			w.terminate(context.WithoutCancel(ctx), false)
			return
		}
		stopTimer(timer)
	}
}

// post runs f on the worker's goroutine; it returns false when the worker
// has ended.
func (w *Worker) post(f func()) bool {
	select {
	case w.events <- f:
		return true
	case <-w.done:
		return false
	}
}

// goTracked runs f in a goroutine that the worker waits for on exit.
func (w *Worker) goTracked(f func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f()
	}()
}

// Update records a new version of the pod from the API and wakes the
// worker to act on it: labels and annotations, containers' images,
// activeDeadlineSeconds, and the conditions others set (readiness gates).
func (w *Worker) Update(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod.DeepCopy()
	if w.snapshot != nil {
		status := w.snapshot.Status
		w.snapshot = pod.DeepCopy()
		w.snapshot.Status = status
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // a wake is pending: it reads this version
	}
}

// RequestDelete asks the worker to stop the pod as a deletion does, with the
// grace period of the deletion (nil: the pod's terminationGracePeriodSeconds).
// Called before Start, for a pod deleted while no node agent ran, it makes
// the worker start nothing and stop what the pod's adopted sandbox runs.
func (w *Worker) RequestDelete(grace *int64) {
	w.mu.Lock()
	if w.grace == nil || (grace != nil && *grace < *w.grace) {
		w.grace = grace
	}
	w.mu.Unlock()
	w.delOnce.Do(func() { close(w.deleted) })
}

// Wait blocks until the worker and every goroutine it started have ended.
func (w *Worker) Wait() { w.wg.Wait() }

// Pod returns the latest pod spec from the API; callers must not modify it.
func (w *Worker) Pod() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

// Published returns a copy of the last published pod.
func (w *Worker) Published() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.snapshot == nil {
		return nil
	}
	return w.snapshot.DeepCopy()
}

// sandbox returns the pod's sandbox once it exists.
func (w *Worker) sandbox() Sandbox {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sb
}

// publish computes the status and notifies when it changed.
func (w *Worker) publish() {
	pod := w.Pod()
	status := w.status(pod)
	running := w.runningNow()
	w.mu.Lock()
	w.published = running
	if w.snapshot != nil && equality.Semantic.DeepEqual(w.snapshot.Status, status) {
		w.mu.Unlock()
		return
	}
	next := pod.DeepCopy()
	next.Status = status
	w.snapshot = next
	w.mu.Unlock()
	w.deps.Notify(next.DeepCopy())
}

// nextTimer returns a timer for the earliest pending start, or nil.
func (w *Worker) nextTimer() clock.Timer {
	var next time.Time
	now := w.deps.Clock.Now()
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	consider(w.state.notBefore)
	consider(w.state.nextRefresh)
	consider(w.activeDeadline())
	for _, c := range w.allCtrs() {
		if !c.running() && !c.finished() {
			consider(c.notBefore)
		}
		if c.imageErr != nil {
			consider(c.pull.backOffAt)
			consider(c.pull.retryAt)
		}
	}
	if next.IsZero() || w.state.terminalPhase != "" {
		return nil
	}
	return w.deps.Clock.NewTimer(next.Sub(now))
}

// allCtrs lists init containers then containers.
func (w *Worker) allCtrs() []*ctr {
	return append(append([]*ctr(nil), w.initCtrs...), w.mainCtrs...)
}

func timerC(t clock.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C()
}

func stopTimer(t clock.Timer) {
	if t != nil {
		t.Stop()
	}
}
