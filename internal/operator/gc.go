package operator

import (
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set:
// a collection starts when the heap has grown by half its live size, not by
// all of it (Go's 100). An operator's live heap is mostly its informer
// caches, so this trades a little CPU for about a quarter less peak memory
// (docs/dev/benchmarks.md: 1,000 RayClusters).
const defaultGCPercent = 50

// gcPercent is the target Run sets: defaultGCPercent, or 0 (leave the
// runtime's) when the environment sets GOGC.
func gcPercent(lookup func(string) (string, bool)) int {
	if _, set := lookup("GOGC"); set {
		return 0
	}
	return defaultGCPercent
}

// applyGCPercent sets percent unless it is 0, and returns the target in
// effect.
func applyGCPercent(percent int) int {
	if percent == 0 {
		current := debug.SetGCPercent(100)
		debug.SetGCPercent(current)
		return current
	}
	debug.SetGCPercent(percent)
	return percent
}
