package operator

import (
	"runtime/debug"
	"testing"
)

func TestGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	unset := func(string) (string, bool) { return "", false }
	set := func(string) (string, bool) { return "200", true }
	if got := gcPercent(unset); got != defaultGCPercent {
		t.Errorf("gcPercent without GOGC = %d, want %d", got, defaultGCPercent)
	}
	if got := gcPercent(set); got != 0 {
		t.Errorf("gcPercent with GOGC = %d, want 0", got)
	}

	if got := applyGCPercent(defaultGCPercent); got != defaultGCPercent || debug.SetGCPercent(100) != defaultGCPercent {
		t.Errorf("applyGCPercent(%d) = %d or not in effect", defaultGCPercent, got)
	}
	debug.SetGCPercent(200) // as GOGC=200 would have set it at start-up
	if got := applyGCPercent(0); got != 200 || debug.SetGCPercent(100) != 200 {
		t.Errorf("applyGCPercent(0) = %d or changed GOGC's 200", got)
	}
}
