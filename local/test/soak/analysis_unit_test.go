package soak_test

import (
	"bufio"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// series makes samples 10 s apart with the given RSS (MiB) and goroutines.
func series(rss []float64, g []int) []sample {
	out := make([]sample, len(rss))
	for i := range rss {
		out[i] = sample{at: time.Duration(i) * 10 * time.Second, rssBytes: int64(rss[i] * (1 << 20)), goroutines: g[i]}
	}
	return out
}

func TestFlatness(t *testing.T) {
	flatG := []int{100, 120, 150, 150, 152, 148, 150, 151}
	cases := map[string]struct {
		rss  []float64
		g    []int
		want []string // substrings of the violations, in order
	}{
		"warm-up growth is ignored": {rss: []float64{10, 40, 60, 60, 61, 59, 62, 60}, g: flatG},
		"RSS growing 25%":           {rss: []float64{50, 50, 60, 60, 70, 70, 75, 75}, g: flatG, want: []string{"RSS grew 25.0%"}},
		"goroutines growing":        {rss: []float64{60, 60, 60, 60, 60, 60, 60, 60}, g: []int{100, 100, 100, 100, 110, 110, 120, 120}, want: []string{"goroutines grew from a mean of 100.0 to 120.0, more than 10.0"}},
		"goroutine slack":           {rss: []float64{60, 60, 60, 60, 60, 60, 60, 60}, g: []int{20, 20, 20, 20, 25, 25, 28, 28}},
		"too few samples":           {rss: []float64{1, 1, 1}, g: []int{1, 1, 1}, want: []string{"only 3 samples"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := flatnessOf(series(tc.rss, tc.g)).violations()
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("violation %q, want it to say %q", got[i], tc.want[i])
				}
			}
		})
	}
}

func TestLeaksSince(t *testing.T) {
	base := inventory{pods: []string{"kube-system/coredns"}, host: sandbox.Inventory{Sandboxes: []string{"u1"}, Netns: []string{"n1"}, Cgroups: []string{"c1"}, NftRules: 5}}
	if got := leaksSince(base, base); len(got) != 0 {
		t.Errorf("no change: leaks %q", got)
	}
	now := inventory{pods: []string{"kube-system/coredns", "soak/x"}, host: sandbox.Inventory{Sandboxes: []string{"u1", "u2"}, Netns: []string{"n2"}, Cgroups: []string{"c1", "c2"}, NftRules: 7}}
	want := []string{"Pod soak/x", "sandbox u2", "netns n2", "cgroup c2", "2 nftables rules beyond the 5 before the first cycle"}
	if got := leaksSince(base, now); !slices.Equal(got, want) {
		t.Errorf("leaks %q, want %q", got, want)
	}
}

func TestParseGoroutines(t *testing.T) {
	text := "# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines 187\ngo_threads 12\n"
	if n, err := parseGoroutines(bufio.NewScanner(strings.NewReader(text))); err != nil || n != 187 {
		t.Errorf("got %d, %v; want 187", n, err)
	}
	if _, err := parseGoroutines(bufio.NewScanner(strings.NewReader("go_threads 12\n"))); err == nil {
		t.Error("no go_goroutines: want an error")
	}
}

func TestOutcomeRight(t *testing.T) {
	cases := map[string]struct {
		o    outcome
		want bool
	}{
		"succeeded":             {outcome{want: rayv1.JobStatusSucceeded, got: rayv1.JobStatusSucceeded, deploy: rayv1.JobDeploymentStatusComplete}, true},
		"failed as it had to":   {outcome{want: rayv1.JobStatusFailed, got: rayv1.JobStatusFailed, deploy: rayv1.JobDeploymentStatusFailed, reason: rayv1.AppFailed}, true},
		"failed for submission": {outcome{want: rayv1.JobStatusFailed, got: rayv1.JobStatusFailed, deploy: rayv1.JobDeploymentStatusFailed, reason: rayv1.SubmissionFailed}, false},
		"failed instead":        {outcome{want: rayv1.JobStatusSucceeded, got: rayv1.JobStatusFailed, deploy: rayv1.JobDeploymentStatusFailed}, false},
		"status not terminal":   {outcome{want: rayv1.JobStatusSucceeded, got: rayv1.JobStatusSucceeded, deploy: rayv1.JobDeploymentStatusRunning}, false},
	}
	for name, tc := range cases {
		if got := tc.o.right(); got != tc.want {
			t.Errorf("%s: right() = %v, want %v", name, got, tc.want)
		}
	}
}

// TestReportFiles: the report's three files are written, the PNG decodes
// at the plot's size, and the summary counts RayJobs by outcome.
func TestReportFiles(t *testing.T) {
	r := &result{
		planned: 4 * time.Minute, ran: 4 * time.Minute, cycles: 1,
		outcomes: []outcome{
			{want: rayv1.JobStatusSucceeded, got: rayv1.JobStatusSucceeded, deploy: rayv1.JobDeploymentStatusComplete},
			{want: rayv1.JobStatusFailed, got: rayv1.JobStatusFailed, deploy: rayv1.JobDeploymentStatusFailed, reason: rayv1.AppFailed},
		},
		samples: series([]float64{50, 60, 61, 60, 62, 61, 60, 61}, []int{100, 120, 121, 119, 120, 122, 121, 120}),
	}
	r.flat = flatnessOf(r.samples)
	dir := t.TempDir()
	if err := r.write(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "memory.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != plotW || b.Dy() != plotH {
		t.Errorf("plot is %v, want %dx%d", b, plotW, plotH)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "samples.csv"))
	if lines := strings.Count(string(csv), "\n"); lines != 9 {
		t.Errorf("samples.csv has %d lines, want a header and 8 samples", lines)
	}
	summary, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	for _, want := range []string{"2: 1 SUCCEEDED as expected, 1 FAILED as expected, 0 wrong", "| verdict | pass |"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, summary)
		}
	}
}

// TestLineEndsAtItsEnd: every line of the plot, whatever its slope, sets one
// pixel per step of its longer axis and ends on its end point (a doubled
// error term walked past the end point on some slopes and never stopped).
func TestLineEndsAtItsEnd(t *testing.T) {
	origin := image.Pt(20, 20)
	for dx := -15; dx <= 15; dx++ {
		for dy := -15; dy <= 15; dy++ {
			img := image.NewRGBA(image.Rect(0, 0, 41, 41))
			end := origin.Add(image.Pt(dx, dy))
			n := line(img, origin, end, colRSS)
			if want := max(abs(dx), abs(dy)) + 1; n != want || img.RGBAAt(end.X, end.Y) != colRSS {
				t.Errorf("line to %+d,%+d: %d pixels, end set %t; want %d pixels ending on the end point",
					dx, dy, n, img.RGBAAt(end.X, end.Y) == colRSS, want)
			}
		}
	}
}
