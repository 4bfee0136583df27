package operator

import (
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set:
// a collection starts when the heap has grown by half its live size, not by
// all of it (Go's 100). An operator's live heap is mostly its informer
// caches, so this trades a little CPU for a third less peak memory
// (docs/dev/benchmarks.md: 1,000 RayClusters).
const defaultGCPercent = 50

// tuneGC sets defaultGCPercent unless the environment sets GOGC, and
// returns the percentage in effect.
func tuneGC(lookup func(string) (string, bool)) int {
	if _, set := lookup("GOGC"); set {
		current := debug.SetGCPercent(100)
		debug.SetGCPercent(current)
		return current
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent
}
