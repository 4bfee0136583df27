package heappeak

import (
	"testing"
	"time"
)

// sink keeps the allocation below alive until the sampler has seen it.
var sink []byte

func TestStopReturnsThePeak(t *testing.T) {
	s := Start(100 * time.Microsecond)
	before := Now()
	sink = make([]byte, 64<<20)
	for i := range sink {
		sink[i] = 1
	}
	waitFor(t, func() bool { return s.peak.Load() >= before+(64<<20) })
	peak := s.Stop()
	sink = nil
	if peak < before+(64<<20) {
		t.Fatalf("peak %d MiB, want at least %d MiB (the heap before plus 64 MiB)", peak>>20, (before+(64<<20))>>20)
	}
	if again := s.Stop(); again != peak {
		t.Fatalf("a second Stop returned %d, want %d", again, peak)
	}
}

// waitFor polls cond until it holds or a minute passes (a signal, not a
// fixed sleep: the sampler's tick is 100 µs).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the sampler never saw the allocation")
		}
		time.Sleep(time.Millisecond)
	}
}
