package soak_test

import (
	"fmt"
	"math"
	"slices"
)

// Flatness thresholds (docs/dev/reliability.md, scenario 5): the mean of
// the last quarter of the samples against the mean of the second quarter
// (the first is warm-up: caches filling, first reconciles).
const (
	// maxRSSGrowth is the largest RSS growth allowed (20%).
	maxRSSGrowth = 0.20
	// maxGoroutineGrowth is the largest goroutine growth allowed (10%),
	// but at least goroutineSlack goroutines: a few reconciles or HTTP
	// connections in flight at sampling time are no leak.
	maxGoroutineGrowth = 0.10
	goroutineSlack     = 10
	// minSamples is the fewest samples a verdict is drawn from.
	minSamples = 8
)

// stats are the min, mean and max of some values.
type stats struct{ min, mean, max float64 }

func statsOf(vals []float64) stats {
	if len(vals) == 0 {
		return stats{}
	}
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	return stats{min: slices.Min(vals), mean: sum / float64(len(vals)), max: slices.Max(vals)}
}

// flatness compares the second and the last quarter of the samples.
type flatness struct {
	samples             int
	rssQ2, rssQ4        stats // MiB
	goQ2, goQ4          stats
	rssGrowth, goGrowth float64 // last over second mean, minus 1
	goAllowed           float64 // goroutines the last quarter may add
}

func flatnessOf(samples []sample) flatness {
	f := flatness{samples: len(samples)}
	n := len(samples)
	q2, q4 := samples[n/4:n/2], samples[3*n/4:]
	f.rssQ2, f.rssQ4 = statsOf(rssMiB(q2)), statsOf(rssMiB(q4))
	f.goQ2, f.goQ4 = statsOf(goroutines(q2)), statsOf(goroutines(q4))
	f.rssGrowth = growth(f.rssQ2.mean, f.rssQ4.mean)
	f.goGrowth = growth(f.goQ2.mean, f.goQ4.mean)
	f.goAllowed = math.Max(maxGoroutineGrowth*f.goQ2.mean, goroutineSlack)
	return f
}

func growth(from, to float64) float64 {
	if from == 0 {
		return 0
	}
	return to/from - 1
}

// violations says where the samples are not flat (or too few to tell).
func (f flatness) violations() []string {
	if f.samples < minSamples {
		return []string{fmt.Sprintf("only %d samples, want at least %d", f.samples, minSamples)}
	}
	var out []string
	if f.rssGrowth > maxRSSGrowth {
		out = append(out, fmt.Sprintf("RSS grew %.1f%% (mean %.1f to %.1f MiB), more than %.0f%%", 100*f.rssGrowth, f.rssQ2.mean, f.rssQ4.mean, 100*maxRSSGrowth))
	}
	if f.goQ4.mean-f.goQ2.mean > f.goAllowed {
		out = append(out, fmt.Sprintf("goroutines grew from a mean of %.1f to %.1f, more than %.1f", f.goQ2.mean, f.goQ4.mean, f.goAllowed))
	}
	return out
}

func rssMiB(samples []sample) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = float64(s.rssBytes) / (1 << 20)
	}
	return out
}

func goroutines(samples []sample) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = float64(s.goroutines)
	}
	return out
}
