package testenv

import (
	"runtime"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/testing/heappeak"
)

// HeapWatch records how far the test process's heap (bytes of heap
// objects, live or not yet swept) grows past where it was when the watch
// began, sampling every millisecond: what an in-process operator's memory
// does while a test runs, compared with nothing but itself.
type HeapWatch struct {
	baseline uint64
	sampler  *heappeak.Sampler
}

// WatchHeap starts a HeapWatch, after a collection; it stops when t ends.
func WatchHeap(t testing.TB) *HeapWatch {
	runtime.GC()
	h := &HeapWatch{baseline: heappeak.Now(), sampler: heappeak.Start(time.Millisecond)}
	t.Cleanup(func() { h.Growth() })
	return h
}

// Growth stops the watch (once) and returns how far the heap grew past
// its baseline at most.
func (h *HeapWatch) Growth() uint64 {
	return h.sampler.Stop() - h.baseline
}
