package podworker

import "time"

// Crash-loop back-off as a kubelet applies it: the first restart is
// immediate; after that a container restarts the current delay after it
// exited, the delay doubling from 10 s to at most 5 min; it starts over
// (immediate restart, then 10 s) when the last restart is more than 10 min
// old.
const (
	initialBackoff = 10 * time.Second
	maxBackoff     = 5 * time.Minute
	backoffReset   = 2 * maxBackoff
)

// crashBackoff is the back-off state of one container.
type crashBackoff struct {
	delay       time.Duration // current delay; 0 before the first restart
	lastRestart time.Time
}

// readyAt returns when a container that finished at finishedAt may restart;
// a time not after finishedAt means at once.
func (b *crashBackoff) readyAt(finishedAt time.Time) time.Time {
	if b.expired(finishedAt) {
		return finishedAt
	}
	return finishedAt.Add(b.delay)
}

// restarted records a restart at now and lengthens the delay.
func (b *crashBackoff) restarted(now time.Time) {
	if b.expired(now) {
		b.delay = initialBackoff
	} else {
		b.delay = min(2*b.delay, maxBackoff)
	}
	b.lastRestart = now
}

// expired tells whether the back-off has started over by t.
func (b *crashBackoff) expired(t time.Time) bool {
	return b.lastRestart.IsZero() || t.Sub(b.lastRestart) > backoffReset
}

// retryBackoff spaces retries of a pod step that failed for a reason the
// user may fix (a missing Secret): 1 s doubling to 1 min.
type retryBackoff struct{ delay time.Duration }

// next returns the delay before the next retry.
func (b *retryBackoff) next() time.Duration {
	b.delay = max(time.Second, min(2*b.delay, time.Minute))
	return b.delay
}
