package testenv

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// HeapWatch records how far the test process's heap (bytes of heap
// objects, live or not yet swept) grows past where it was when the watch
// began, sampling every millisecond: what an in-process operator's memory
// does while a test runs, compared with nothing but itself.
type HeapWatch struct {
	stop     chan struct{}
	done     sync.WaitGroup
	baseline uint64
	peak     uint64
}

// WatchHeap starts a HeapWatch, after a collection; it stops when t ends.
func WatchHeap(t testing.TB) *HeapWatch {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	h := &HeapWatch{stop: make(chan struct{}), baseline: sample[0].Value.Uint64()}
	h.peak = h.baseline
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			h.peak = max(h.peak, sample[0].Value.Uint64())
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { h.Growth() })
	return h
}

// Growth stops the watch (once) and returns how far the heap grew past
// its baseline at most.
func (h *HeapWatch) Growth() uint64 {
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	h.done.Wait()
	return h.peak - h.baseline
}
