package rayversions_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// result is the outcome of one case of one release: pass, fail or skip,
// the time it took, and what was measured or why it was skipped.
type result struct {
	release, feature, outcome, note string
	took                            time.Duration
}

// track records t's outcome as feature of release when t ends; note adds
// what t measured (set it before t ends).
func (s *suite) track(t *testing.T, release, feature string, note *string) {
	s.trackAs(t, release, feature, "pass", note)
}

// trackKnownFailure is track for a case that checks a known failure of the
// release (one that is not the operator's): it records "known failure"
// when t passes, that is when the release failed as known.
func (s *suite) trackKnownFailure(t *testing.T, release, feature string, note *string) {
	s.trackAs(t, release, feature, "known failure", note)
}

// trackAs records t's outcome, passed the outcome when t passed.
func (s *suite) trackAs(t *testing.T, release, feature, passed string, note *string) {
	began := time.Now()
	t.Cleanup(func() {
		r := result{release: release, feature: feature, outcome: passed, took: time.Since(began)}
		switch {
		case t.Failed():
			r.outcome = "fail"
		case t.Skipped():
			r.outcome = "skip"
		}
		if note != nil {
			r.note = *note
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.results = append(s.results, r)
	})
}

// printResults prints the results, release by release.
func (s *suite) printResults(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Ray\tcase\tresult\ttime\tmeasured, or why")
	for _, v := range s.versions {
		for _, r := range s.results {
			if r.release == v.String() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.release, r.feature, r.outcome, r.took.Round(time.Second), strings.ReplaceAll(r.note, "\n", " "))
			}
		}
	}
	_ = tw.Flush()
}
