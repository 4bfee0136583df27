package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfilerFiles: against Go's own pprof handlers, the profiler saves
// the CPU profile, the trace, the heap and the allocs profiles under the
// run's prefix, the trace in the runtime's trace format.
func TestProfilerFiles(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	p := newProfiler(strings.TrimPrefix(srv.URL, "http://"), dir, "rayjob", 3, "a b")
	p.startCPU(t.Context(), 1)
	p.startTrace(t.Context(), 1)
	files, err := p.finish(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, s := range []string{"cpu.pprof", "trace.out", "heap.pprof", "allocs.pprof"} {
		want[filepath.Join(dir, "rayjob-3-a_b-"+s)] = true
	}
	for _, f := range files {
		if !want[f] {
			t.Errorf("unexpected file %s", f)
		}
		delete(want, f)
	}
	if len(want) > 0 {
		t.Errorf("files %v, missing %v", files, want)
	}
	trace, err := os.ReadFile(filepath.Join(dir, "rayjob-3-a_b-trace.out"))
	if err != nil || !bytes.HasPrefix(trace, []byte("go 1.")) {
		t.Errorf("trace file: %v, begins %q", err, trace[:min(len(trace), 16)])
	}
}
