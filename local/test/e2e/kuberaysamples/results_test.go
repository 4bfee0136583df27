package kuberaysamples_test

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// result is the outcome of one sample: pass, fail or skip; for one that
// ran, what was measured (ready, SUCCEEDED) and how long after kubectl
// create it was seen; note says why it was skipped.
type result struct {
	file, outcome, measured, note string
	took                          time.Duration
}

// record adds a sample's result to the suite's table.
func (s *suite) record(r result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results = append(s.results, r)
}

// printResults prints the table of the samples' results and their counts.
func (s *suite) printResults(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Samples run side by side end in any order; the table is by file.
	slices.SortFunc(s.results, func(a, b result) int { return strings.Compare(a.file, b.file) })
	counts := map[string]int{}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "KubeRay %s sample\tresult\ttime\ttime to, or why\n", s.version)
	for _, r := range s.results {
		counts[r.outcome]++
		took := ""
		if r.outcome != "skip" {
			took = r.took.Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.file, r.outcome, took, r.measured+r.note)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "KubeRay %s samples: %d ran (%d passed, %d failed), %d skipped\n",
		s.version, counts["pass"]+counts["fail"], counts["pass"], counts["fail"], counts["skip"])
}
