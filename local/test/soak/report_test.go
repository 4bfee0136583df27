package soak_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// result is everything the soak measured.
type result struct {
	planned, ran time.Duration
	cycles       int
	outcomes     []outcome
	upgrades     int
	upgradeErrs  []string
	upgradeTimes []time.Duration
	samples      []sample
	sampleErrs   int
	flat         flatness
	// idleBefore is the first sample (the RayService starting), idleAfter
	// one taken after the teardown.
	idleBefore, idleAfter sample
	leaks                 []string
	leakCheckError        error
}

// counts are the RayJobs by how they ended: succeeded as they had to,
// failed as they had to, and wrong (any other end, or none in time).
func (r *result) counts() (succeeded, failed, wrong int) {
	for _, o := range r.outcomes {
		switch {
		case !o.right():
			wrong++
		case o.want == "SUCCEEDED":
			succeeded++
		default:
			failed++
		}
	}
	return succeeded, failed, wrong
}

// write puts samples.csv, summary.md and memory.png into dir.
func (r *result) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var csv strings.Builder
	csv.WriteString("elapsed_s,rss_mib,goroutines\n")
	for _, s := range r.samples {
		fmt.Fprintf(&csv, "%.1f,%.2f,%d\n", s.at.Seconds(), float64(s.rssBytes)/(1<<20), s.goroutines)
	}
	if err := os.WriteFile(filepath.Join(dir, "samples.csv"), []byte(csv.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(r.summary()), 0o644); err != nil {
		return err
	}
	return writePlot(filepath.Join(dir, "memory.png"), r.samples)
}

// summary is summary.md: one table and the lists behind its problems.
func (r *result) summary() string {
	ok, failed, wrong := r.counts()
	f := r.flat
	var b strings.Builder
	fmt.Fprintf(&b, "# Soak %s\n\n", time.Now().UTC().Format(time.RFC3339))
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, format string, args ...any) { fmt.Fprintf(&b, "| %s | %s |\n", k, fmt.Sprintf(format, args...)) }
	row("duration", "%v planned, %v cycling", r.planned, r.ran.Round(time.Second))
	row("cycles (2 RayJobs each)", "%d", r.cycles)
	row("RayJobs", "%d: %d SUCCEEDED as expected, %d FAILED as expected, %d wrong", len(r.outcomes), ok, failed, wrong)
	row("mean RayJob time (create to terminal)", "%v", meanJobTime(r.outcomes))
	row("RayService upgrades", "%d done, %d failed, mean %v (spec change to old cluster gone and new version answering)", r.upgrades, len(r.upgradeErrs), mean(r.upgradeTimes))
	row("samples (every 10 s)", "%d (%d failed looks)", len(r.samples), r.sampleErrs)
	row("RSS MiB, 2nd quarter min/mean/max", "%.1f / %.1f / %.1f", f.rssQ2.min, f.rssQ2.mean, f.rssQ2.max)
	row("RSS MiB, last quarter min/mean/max", "%.1f / %.1f / %.1f", f.rssQ4.min, f.rssQ4.mean, f.rssQ4.max)
	row("RSS growth (limit)", "%+.1f%% (%.0f%%)", 100*f.rssGrowth, 100*maxRSSGrowth)
	row("goroutines, 2nd quarter min/mean/max", "%.0f / %.1f / %.0f", f.goQ2.min, f.goQ2.mean, f.goQ2.max)
	row("goroutines, last quarter min/mean/max", "%.0f / %.1f / %.0f", f.goQ4.min, f.goQ4.mean, f.goQ4.max)
	row("goroutine growth (limit)", "%+.1f (%+.1f%%) (%.1f)", f.goQ4.mean-f.goQ2.mean, 100*f.goGrowth, f.goAllowed)
	row("after the teardown vs the first sample", "RSS %.1f vs %.1f MiB, goroutines %d vs %d",
		float64(r.idleAfter.rssBytes)/(1<<20), float64(r.idleBefore.rssBytes)/(1<<20), r.idleAfter.goroutines, r.idleBefore.goroutines)
	row("leaks after deleting everything", "%s", leakLine(r.leaks, r.leakCheckError))
	row("verdict", "%s", verdict(r.problems()))
	b.WriteString("\nmemory.png: RSS in MiB (red, top) and goroutines (blue, bottom) over minutes; each y axis from 0 to its label.\n")
	list(&b, "Problems", r.problems())
	var wrongs []string
	for _, o := range r.outcomes {
		if !o.right() {
			wrongs = append(wrongs, o.String())
		}
	}
	list(&b, "Wrong RayJobs", wrongs)
	return b.String()
}

// problems are the reasons the soak fails.
func (r *result) problems() []string {
	var out []string
	if _, _, wrong := r.counts(); wrong > 0 {
		out = append(out, fmt.Sprintf("%d RayJobs ended wrong", wrong))
	}
	out = append(out, r.upgradeErrs...)
	out = append(out, r.flat.violations()...)
	for _, l := range r.leaks {
		out = append(out, "leaked "+l)
	}
	if r.leakCheckError != nil {
		out = append(out, r.leakCheckError.Error())
	}
	return out
}

func verdict(problems []string) string {
	if len(problems) == 0 {
		return "pass"
	}
	return fmt.Sprintf("FAIL (%d problems)", len(problems))
}

func leakLine(leaks []string, err error) string {
	switch {
	case err != nil:
		return "unknown: " + err.Error()
	case len(leaks) == 0:
		return "none (Pods, sandboxes, netns, cgroups, nftables rules as before the first cycle)"
	}
	return strings.Join(leaks, "; ")
}

func list(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "- %s\n", it)
	}
}

func meanJobTime(outcomes []outcome) time.Duration {
	var took []time.Duration
	for _, o := range outcomes {
		if o.err == nil {
			took = append(took, o.took)
		}
	}
	return mean(took)
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return (sum / time.Duration(len(ds))).Round(time.Second)
}
