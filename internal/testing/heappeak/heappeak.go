// Package heappeak samples the Go heap (bytes of heap objects, live or not
// yet swept) while code runs and keeps the largest value seen: the peak a
// benchmark reports, or how far a test's in-process operator made the heap
// grow.
package heappeak

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// heapObjects is the runtime metric sampled.
const heapObjects = "/memory/classes/heap/objects:bytes"

// Sampler samples the heap until Stop.
type Sampler struct {
	stop chan struct{}
	once sync.Once
	done sync.WaitGroup
	peak atomic.Uint64 // written by the sampling goroutine alone
}

// Now returns the heap's current size.
func Now() uint64 {
	sample := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// Start samples the heap every interval from now on.
func Start(interval time.Duration) *Sampler {
	s := &Sampler{stop: make(chan struct{})}
	s.peak.Store(Now())
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			s.peak.Store(max(s.peak.Load(), Now()))
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling (once; later calls only wait) and returns the
// largest heap seen.
func (s *Sampler) Stop() uint64 {
	s.once.Do(func() { close(s.stop) })
	s.done.Wait()
	return s.peak.Load()
}
