package operator

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	unset := func(string) (string, bool) { return "", false }
	if got := tuneGC(unset); got != defaultGCPercent {
		t.Errorf("tuneGC without GOGC = %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GC percent in effect %d, want %d", got, defaultGCPercent)
	}

	debug.SetGCPercent(200) // as GOGC=200 would have set it at start-up
	set := func(string) (string, bool) { return "200", true }
	if got := tuneGC(set); got != 200 {
		t.Errorf("tuneGC with GOGC=200 = %d, want 200", got)
	}
	if got := debug.SetGCPercent(100); got != 200 {
		t.Errorf("GC percent in effect %d, want GOGC's 200", got)
	}
}
