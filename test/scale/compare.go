package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ray-operator/ray-operator/internal/operator"
)

// Roles of a run in a comparison.
const (
	roleOurs      = "ours"
	roleReference = "reference"
	roleFloor     = "floor"
)

// controlPlaneComponents are the columns of the control plane's CPU time.
var controlPlaneComponents = []string{"kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager", "kwok"}

// readResults reads the JSON lines of path.
func readResults(path string) ([]Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// role says whether r is the floor, this operator (lines written before
// userAgent was recorded count as this operator) or a reference build.
func role(r *Result) string {
	switch {
	case r.Kind == kindFloor:
		return roleFloor
	case r.UserAgent == "" || r.UserAgent == operator.UserAgent:
		return roleOurs
	default:
		return roleReference
	}
}

// comparison is the runs of one family (RayClusters with their floor, or
// RayJobs) at one size.
type comparison struct {
	family string
	n      int
	runs   []Result
}

// family puts the floor beside the RayCluster runs it is the floor of.
func family(kind string) string {
	if kind == kindFloor {
		return kindRayCluster
	}
	return kind
}

// groupRuns groups results by family and size, in that order; within a
// group, this operator's runs come first, then reference builds, then the
// floor, each in file order.
func groupRuns(results []Result) []comparison {
	type key struct {
		family string
		n      int
	}
	groups := map[key]*comparison{}
	for _, r := range results {
		k := key{family(r.Kind), r.N}
		if groups[k] == nil {
			groups[k] = &comparison{family: k.family, n: k.n}
		}
		groups[k].runs = append(groups[k].runs, r)
	}
	var out []comparison
	for _, k := range slices.SortedFunc(maps.Keys(groups), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.family, b.family), cmp.Compare(a.n, b.n))
	}) {
		c := groups[k]
		rank := map[string]int{roleOurs: 0, roleReference: 1, roleFloor: 2}
		slices.SortStableFunc(c.runs, func(a, b Result) int { return cmp.Compare(rank[role(&a)], rank[role(&b)]) })
		out = append(out, *c)
	}
	return out
}

// last is the last run of the group in role (and with label, when label
// is not empty), or nil.
func (c *comparison) last(r, label string) *Result {
	var found *Result
	for i := range c.runs {
		if role(&c.runs[i]) == r && (label == "" || c.runs[i].Label == label) {
			found = &c.runs[i]
		}
	}
	return found
}

// ratio is a/b to two decimals, or "–" when b is missing or zero.
func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// compareTables is a Markdown table per family and size: each run's time
// to ready against the floor's, and its peak RSS, writes and CPU seconds
// per object against the last reference build's (the last one labelled
// refLabel, when it is set); the reconcile p99 of each controller; the
// control plane's CPU seconds.
func compareTables(results []Result, refLabel string) string {
	var b strings.Builder
	for _, c := range groupRuns(results) {
		fmt.Fprintf(&b, "### %s, N=%d\n\n", c.family, c.n)
		b.WriteString("| run | role | time to ready (s) | × floor | peak RSS (MiB) | × ref | writes | × ref | CPU s per object | × ref | reconcile p99 (s) | control plane CPU s (" +
			strings.Join(controlPlaneComponents, ", ") + ") | load before |\n")
		b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n")
		floor, ref := c.last(roleFloor, ""), c.last(roleReference, refLabel)
		for i := range c.runs {
			b.WriteString(compareRow(&c.runs[i], floor, ref))
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func compareRow(r, floor, ref *Result) string {
	var floorTime, refRSS, refWrites, refCPU float64
	if floor != nil {
		floorTime = floor.TimeToReadySeconds
	}
	if ref != nil {
		refRSS, refWrites, refCPU = ref.PeakRSSMiB, float64(ref.WritesTotal), cpuPerObject(ref)
	}
	rss, rssRatio := fmt.Sprintf("%.0f", r.PeakRSSMiB), ratio(r.PeakRSSMiB, refRSS)
	cpu, cpuRatio := fmt.Sprintf("%.4f", cpuPerObject(r)), ratio(cpuPerObject(r), refCPU)
	if role(r) == roleFloor { // no operator
		rss, rssRatio, cpu, cpuRatio = "–", "–", "–", "–"
	}
	return fmt.Sprintf("| %s | %s | %.1f | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |",
		r.Label, role(r), r.TimeToReadySeconds, ratio(r.TimeToReadySeconds, floorTime),
		rss, rssRatio, r.WritesTotal, ratio(float64(r.WritesTotal), refWrites),
		cpu, cpuRatio, reconcileP99s(r.Reconcile), controlPlaneCPU(r.ControlPlane), loadText(r.LoadAvg))
}

func cpuPerObject(r *Result) float64 {
	if r.N == 0 {
		return 0
	}
	return r.CPUSeconds / float64(r.N)
}

// reconcileP99s is "controller p99" for each controller that reconciled.
func reconcileP99s(times map[string]ReconcileTime) string {
	if len(times) == 0 {
		return "–"
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(times)) {
		parts = append(parts, fmt.Sprintf("%s %.3f", name, times[name].P99Seconds))
	}
	return strings.Join(parts, ", ")
}

func controlPlaneCPU(usage map[string]Usage) string {
	if len(usage) == 0 {
		return "–"
	}
	parts := make([]string, len(controlPlaneComponents))
	for i, name := range controlPlaneComponents {
		parts[i] = fmt.Sprintf("%.1f", usage[name].CPUSeconds)
	}
	return strings.Join(parts, " / ")
}

func loadText(load []float64) string {
	if len(load) != 3 {
		return "–"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", load[0], load[1], load[2])
}

// compare prints the comparison tables of the results in path, and plots
// their ready series into plotPath when it is set.
func compare(path, plotPath, refLabel string) error {
	results, err := readResults(path)
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return errors.New(path + " holds no results")
	}
	fmt.Print(compareTables(results, refLabel))
	if plotPath == "" {
		return nil
	}
	return plotReady(results, plotPath)
}
