package podworker

import (
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Crash-loop back-off with the kubelet's own flowcontrol.Backoff, used as
// the kubelet uses it for container restarts (kuberuntime's doBackOff):
// when a container has exited, it waits while IsInBackOffSince(its key,
// finishedAt) holds, that is until finishedAt plus the current delay; when
// it restarts, Next(key, finishedAt) lengthens the delay. So the first
// restart is immediate (no entry yet), the delay then doubles from 10 s to
// at most 5 min, and Backoff's default expiry (an exit more than
// 2 × maxBackoff = 10 min after the last restart) starts it over: an
// immediate restart, then 10 s.
const (
	initialBackoff = 10 * time.Second
	maxBackoff     = 5 * time.Minute
)

// crashLoop is the crash-loop back-off of a pod's containers, keyed by
// container name (unique within a pod).
type crashLoop struct{ b *flowcontrol.Backoff }

// newCrashLoop makes the back-off on clk (NewFakeBackOff is NewBackOff with
// a clock of one's choosing: the node's, which tests step).
func newCrashLoop(clk clock.Clock) crashLoop {
	return crashLoop{flowcontrol.NewFakeBackOff(initialBackoff, maxBackoff, clk)}
}

// readyAt returns when container, which exited at finishedAt, may restart;
// a time not after now means at once.
func (l crashLoop) readyAt(container string, finishedAt time.Time) time.Time {
	if l.b.IsInBackOffSince(container, finishedAt) {
		return finishedAt.Add(l.b.Get(container))
	}
	return finishedAt
}

// restarted records that container, which exited at finishedAt, restarts
// now, and lengthens its delay.
func (l crashLoop) restarted(container string, finishedAt time.Time) {
	l.b.Next(container, finishedAt)
}

// forget starts container's back-off over, as for a new container: a
// kubelet keys it by the container's spec hash, which a new image changes.
func (l crashLoop) forget(container string) { l.b.Reset(container) }

// delay is container's current delay (0 before its first restart).
func (l crashLoop) delay(container string) time.Duration { return l.b.Get(container) }

// retries spaces retries of a step that failed for a reason the user may
// fix (a missing Secret): 1 s doubling to at most 1 min, keyed by container
// name, or setupKey for the pod's sandbox and volumes. A success resets the
// key. Backoff's expiry (2 min without a failure) never applies: a failed
// step is retried at most 1 min later.
type retries struct{ b *flowcontrol.Backoff }

// setupKey is the retry key of the pod's setup; no container has this name
// (names are DNS labels).
const setupKey = "pod setup"

// newRetries makes the retry back-off on clk.
func newRetries(clk clock.Clock) retries {
	return retries{flowcontrol.NewFakeBackOff(time.Second, time.Minute, clk)}
}

// newPullBackOff makes the image back-off on clk: 10 s doubling to at most
// 5 min between pulls of a failing image, keyed by container name, as a
// kubelet's image back-off (its container back-off's bounds).
func newPullBackOff(clk clock.Clock) retries {
	return retries{flowcontrol.NewFakeBackOff(initialBackoff, maxBackoff, clk)}
}

// next returns the delay before the next retry of key, which failed now.
func (r retries) next(key string, now time.Time) time.Duration {
	r.b.Next(key, now)
	return r.b.Get(key)
}

// reset forgets the failures of key.
func (r retries) reset(key string) { r.b.Reset(key) }
