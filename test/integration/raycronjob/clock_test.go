package raycronjob_test

import (
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// queueClock is the fake clock the RayCronJob controller runs on: its
// schedule reads the time from it, and its work queue waits on it for the
// requeues the controller asks for. It records those waits, so a test can
// see when the controller asked to be looked at again (nextRequeue) and
// move the clock exactly there.
//
// The work queue keeps one timer, for its earliest requeue, and makes a
// new one whenever that changes. A queue that read the time just before
// the clock moved makes that timer too late (it adds the delay to the new
// time): so every move also ticks the queue's heartbeat, after which the
// queue reads the time again and resets the timer to the requeue itself.
// A real clock's heartbeat ticks every 10 s as well.
type queueClock struct {
	*clocktesting.FakeClock

	mu      sync.Mutex
	timers  []*queueTimer
	tickers []*pokedTicker
}

var _ clock.WithTickerAndDelayedExecution = (*queueClock)(nil)

// newClock is a fake clock a second short of the next full minute, so the
// first schedule time of a RayCronJob created right after (the next full
// minute of the API server's clock) is a second ahead on it.
func newClock() *queueClock {
	now := time.Now()
	return &queueClock{FakeClock: clocktesting.NewFakeClock(now.Truncate(time.Minute).Add(time.Minute - time.Second))}
}

// SetTime moves the clock to t and ticks the queue's heartbeat.
func (c *queueClock) SetTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.FakeClock.SetTime(t)
	for _, ticker := range c.tickers {
		ticker.poke(t)
	}
}

// Step moves the clock by d and ticks the queue's heartbeat.
func (c *queueClock) Step(d time.Duration) { c.SetTime(c.Now().Add(d)) }

// NewTimer records the timer: the work queue makes one for its earliest
// requeue (and nothing else makes timers on this clock).
func (c *queueClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &queueTimer{Timer: c.FakeClock.NewTimer(d), clock: c, at: c.FakeClock.Now().Add(d)}
	c.timers = append(c.timers, t)
	return t
}

// NewTicker returns a ticker that SetTime also ticks.
func (c *queueClock) NewTicker(d time.Duration) clock.Ticker {
	t := &pokedTicker{Ticker: c.FakeClock.NewTicker(d), clock: c, c: make(chan time.Time, 1), stop: make(chan struct{})}
	go t.forward()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tickers = append(c.tickers, t)
	return t
}

// nextRequeue is the earliest requeue the work queue waits for: the
// time of its timer that has neither fired nor been stopped.
func (c *queueClock) nextRequeue() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	c.timers = slices.DeleteFunc(c.timers, func(t *queueTimer) bool { return t.stopped || !t.at.After(now) })
	if len(c.timers) == 0 {
		return time.Time{}, false
	}
	return slices.MinFunc(c.timers, func(a, b *queueTimer) int { return a.at.Compare(b.at) }).at, true
}

// newOperator forgets the timers recorded so far: those of a stopped
// operator's queue are no requeues of the next one.
func (c *queueClock) newOperator() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = nil
}

// queueTimer is a timer of the work queue and the time it fires at.
type queueTimer struct {
	clock.Timer
	clock   *queueClock
	at      time.Time
	stopped bool
}

func (t *queueTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	t.stopped = true
	return t.Timer.Stop()
}

func (t *queueTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	t.stopped, t.at = false, t.clock.FakeClock.Now().Add(d)
	if !slices.Contains(t.clock.timers, t) {
		t.clock.timers = append(t.clock.timers, t)
	}
	return t.Timer.Reset(d)
}

// pokedTicker is a fake ticker that the clock can also tick at once.
type pokedTicker struct {
	clock.Ticker
	clock *queueClock
	c     chan time.Time
	stop  chan struct{}
	once  sync.Once
}

func (t *pokedTicker) C() <-chan time.Time { return t.c }

// poke ticks, unless a tick is already waiting (as a ticker drops ticks
// nobody takes).
func (t *pokedTicker) poke(at time.Time) {
	select {
	case t.c <- at:
	default:
	}
}

// forward passes on the fake ticker's ticks until Stop.
func (t *pokedTicker) forward() {
	for {
		select {
		case at := <-t.Ticker.C():
			t.poke(at)
		case <-t.stop:
			return
		}
	}
}

func (t *pokedTicker) Stop() {
	t.once.Do(func() {
		t.Ticker.Stop()
		close(t.stop)
		t.clock.mu.Lock()
		defer t.clock.mu.Unlock()
		t.clock.tickers = slices.DeleteFunc(t.clock.tickers, func(other *pokedTicker) bool { return other == t })
	})
}
