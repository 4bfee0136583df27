package dashboard

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Back-off of a request to a Ray dashboard (or a Serve proxy) that keeps
// failing: the first retry waits DefaultRetryBase, each further consecutive
// failure doubles the wait, up to DefaultRetryMax.
const (
	DefaultRetryBase = 3 * time.Second
	DefaultRetryMax  = time.Minute
)

// BackoffKey names one kind of request one object makes: Object is the
// object that asks (a RayJob, a RayService), UID tells a re-created object
// from the one that failed, and Call what it asks and of whom (for
// instance a cluster's Serve API).
type BackoffKey struct {
	Object types.NamespacedName
	UID    types.UID
	Call   string
}

// Failure is a run of consecutive failures of one request.
type Failure struct {
	// Count is the number of consecutive failures.
	Count int
	// Wait is the back-off after the last failure, and RetryAt when it ends.
	Wait    time.Duration
	RetryAt time.Time
	// Reason and Message are what the caller recorded about the last
	// failure (an event reason, what failed).
	Reason, Message string
}

// Backoff remembers, in memory, which requests are failing, so that a pass
// that a watch event brings (the status write of the failing pass, say)
// does not ask a failing dashboard again before the back-off ends, and so
// that a controller requeues after the back-off instead of returning the
// error (which would requeue after controller-runtime's rate limiter: 5 ms
// at first, up to 16 minutes after a long outage). An operator restart
// forgets it, which only means one early retry. It is safe for concurrent
// use; the zero value uses the default base and maximum.
//
// The delays and the "still backing off" test are client-go's
// flowcontrol.Backoff, the per-item back-off the kubelet uses, without
// jitter. Backoff adds what flowcontrol does not keep (the count, reason and
// message of a run of failures, when it ends) and an index by object, since
// flowcontrol cannot list its entries. Two choices keep the behaviour the
// controllers were written for:
//   - A run never expires with time: flowcontrol would restart it at Base,
//     and its GC drop it, once 2×Max passed without a failure; here it lasts
//     until the request succeeds or is no longer made (Forget, Retain,
//     ForgetObject), so the count in "failed N times in a row" and the
//     delay never disagree.
//   - Time is what the caller passes (its injected clock's now), handed to
//     flowcontrol through its Clock.
type Backoff struct {
	// Base and Max override DefaultRetryBase and DefaultRetryMax. Set them
	// before the first failure: the delays are built from them then.
	Base, Max time.Duration

	mu       sync.Mutex
	delays   *flowcontrol.Backoff
	at       *callTime // what delays reads as now
	failures map[BackoffKey]Failure
}

// callTime is the clock flowcontrol reads while Backoff holds its mutex: the
// time of the current call. Of a Clock, flowcontrol.Backoff reads only Now
// (and Since, in a method Backoff does not call); the embedded real clock
// only completes the interface.
type callTime struct {
	clock.RealClock
	now time.Time
}

// Now is the time of the current call.
func (c *callTime) Now() time.Time { return c.now }

// Since is the time from t to the current call.
func (c *callTime) Since(t time.Time) time.Duration { return c.now.Sub(t) }

// newDelays returns a flowcontrol.Backoff with b's limits whose runs never
// expire, reading the time from at.
func (b *Backoff) newDelays(at *callTime) *flowcontrol.Backoff {
	base, most := b.limits()
	d := flowcontrol.NewFakeBackOff(base, most, at)
	d.HasExpiredFunc = func(time.Time, time.Time, time.Duration) bool { return false }
	return d
}

// flow returns the delays, built at first use (the zero Backoff works).
// Call it with b.mu held.
func (b *Backoff) flow() *flowcontrol.Backoff {
	if b.delays == nil {
		b.at = &callTime{}
		b.delays = b.newDelays(b.at)
		b.failures = map[BackoffKey]Failure{}
	}
	return b.delays
}

// backoffID is key as a flowcontrol item: each field quoted, so that no two
// keys meet (a Call may contain any character).
func backoffID(key BackoffKey) string {
	return strconv.Quote(key.Object.Namespace) + strconv.Quote(key.Object.Name) +
		strconv.Quote(string(key.UID)) + strconv.Quote(key.Call)
}

// After is the wait after the n-th consecutive failure (n ≥ 1): flowcontrol's
// sequence, replayed on a scratch back-off until n or the cap.
func (b *Backoff) After(n int) time.Duration {
	d := b.newDelays(&callTime{})
	_, most := b.limits()
	for i := 0; i < max(n, 1) && d.Get("") < most; i++ {
		d.Next("", time.Time{})
	}
	return d.Get("")
}

func (b *Backoff) limits() (time.Duration, time.Duration) {
	base, most := DefaultRetryBase, DefaultRetryMax
	if b.Base > 0 {
		base = b.Base
	}
	if b.Max > 0 {
		most = b.Max
	}
	return base, max(base, most)
}

// Wait is how long the request must still wait before it is sent again;
// 0 means send it now.
func (b *Backoff) Wait(key BackoffKey, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.failures[key]
	if !ok || !b.flow().IsInBackOffSinceUpdate(backoffID(key), now) {
		return 0
	}
	return f.RetryAt.Sub(now)
}

// Fail counts a failure at now, keeps reason and message, and returns the
// run of failures it extends (or starts).
func (b *Backoff) Fail(key BackoffKey, now time.Time, reason, message string) Failure {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := backoffID(key)
	delays := b.flow()
	b.at.now = now
	delays.Next(id, now)
	f := b.failures[key]
	f.Count++
	f.Wait = delays.Get(id)
	f.RetryAt = now.Add(f.Wait)
	f.Reason, f.Message = reason, message
	b.failures[key] = f
	return f
}

// Failing returns the run of failures of a request, if it is in one.
func (b *Backoff) Failing(key BackoffKey) (Failure, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.failures[key]
	return f, ok
}

// Forget ends a request's run of failures: it succeeded, or is no longer
// made.
func (b *Backoff) Forget(key BackoffKey) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forget(key)
}

// forget drops key from both maps; call it with b.mu held.
func (b *Backoff) forget(key BackoffKey) {
	if _, ok := b.failures[key]; ok {
		delete(b.failures, key)
		b.delays.Reset(backoffID(key))
	}
}

// ForgetObject forgets every request of an object (whatever its UID), as
// when it is gone.
func (b *Backoff) ForgetObject(object types.NamespacedName) {
	b.Retain(object, func(BackoffKey) bool { return false })
}

// Retain forgets the requests of an object for which keep is false. This,
// with Forget and ForgetObject, is the only garbage collection: runs do not
// expire (see Backoff), so flowcontrol's GC would drop nothing.
func (b *Backoff) Retain(object types.NamespacedName, keep func(BackoffKey) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for key := range b.failures {
		if key.Object == object && !keep(key) {
			b.forget(key)
		}
	}
}

// Len is the number of requests in a run of failures.
func (b *Backoff) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.failures)
}
