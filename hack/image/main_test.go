package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

func TestParseBuildFlags(t *testing.T) {
	f, err := parseBuildFlags([]string{"-image", "r.example.com/op:v1", "-layout", "out", "-source-date-epoch", "1764979200",
		"-links", "/manager,/usr/bin/op", "-platforms", "linux/amd64,linux/arm64/v8", "-version", "v1"})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		Dir: ".", Package: "./cmd/ray-operator", Version: "v1", BinaryPath: "/ray-operator",
		Created:   time.Date(2025, 12, 6, 0, 0, 0, 0, time.UTC),
		Links:     []string{"/manager", "/usr/bin/op"},
		Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}},
	}
	if diff := cmp.Diff(want, f.opts); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	for _, args := range [][]string{{"-layout", "out"}, {"-image", "r.example.com/op:v1"}} {
		if _, err := parseBuildFlags(args); err == nil {
			t.Errorf("%v: accepted without -image and -layout", args)
		}
	}
}

// TestSummaryEndsWithDigest checks what `make image` prints: a line per
// platform, then the index digest alone on the last line.
func TestSummaryEndsWithDigest(t *testing.T) {
	idx, err := random.Index(256, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := summarize(&out, idx); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if got, want := lines[len(lines)-1], digestOf(t, idx).String(); got != want || len(lines) != 3 {
		t.Errorf("printed %q, want 2 image lines and last %s", lines, want)
	}
	if !strings.Contains(lines[0], "2 layers") {
		t.Errorf("first line %q does not give the layer count", lines[0])
	}
}
