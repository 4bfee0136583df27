package dashboard

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
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
type Backoff struct {
	// Base and Max override DefaultRetryBase and DefaultRetryMax.
	Base, Max time.Duration

	mu       sync.Mutex
	failures map[BackoffKey]Failure
}

// After is the wait after the n-th consecutive failure (n ≥ 1).
func (b *Backoff) After(n int) time.Duration {
	base, most := b.limits()
	d := base
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	return min(d, most)
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
	if !ok || !now.Before(f.RetryAt) {
		return 0
	}
	return f.RetryAt.Sub(now)
}

// Fail counts a failure at now, keeps reason and message, and returns the
// run of failures it extends (or starts).
func (b *Backoff) Fail(key BackoffKey, now time.Time, reason, message string) Failure {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures == nil {
		b.failures = map[BackoffKey]Failure{}
	}
	f := b.failures[key]
	f.Count++
	f.Wait = b.After(f.Count)
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
	delete(b.failures, key)
}

// ForgetObject forgets every request of an object (whatever its UID), as
// when it is gone.
func (b *Backoff) ForgetObject(object types.NamespacedName) {
	b.Retain(object, func(BackoffKey) bool { return false })
}

// Retain forgets the requests of an object for which keep is false.
func (b *Backoff) Retain(object types.NamespacedName, keep func(BackoffKey) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for key := range b.failures {
		if key.Object == object && !keep(key) {
			delete(b.failures, key)
		}
	}
}

// Len is the number of requests in a run of failures.
func (b *Backoff) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.failures)
}
