package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestInfoFrom(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}
	tests := map[string]struct {
		linked string
		bi     *debug.BuildInfo
		want   Info
	}{
		"link-time version wins over the module version": {
			linked: "v1.2.3",
			bi:     &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-2026-abc"}, Settings: vcs},
			want:   Info{Version: "v1.2.3", Revision: "abc123-dirty", GoVersion: runtime.Version()},
		},
		"module version stamped by go build": {
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122-abc"}, Settings: vcs[:1]},
			want: Info{Version: "v0.0.0-20261122-abc", Revision: "abc123", GoVersion: runtime.Version()},
		},
		"devel build": {
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: Info{Version: DevVersion, GoVersion: runtime.Version()},
		},
		"no build information": {
			want: Info{Version: DevVersion, GoVersion: runtime.Version()},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, infoFrom(tc.linked, tc.bi)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionIsNeverEmpty(t *testing.T) {
	if Version() == "" {
		t.Fatal("Version() is empty")
	}
}

func TestString(t *testing.T) {
	got := Info{Version: "v1.2.3", Revision: "abc", GoVersion: "go1.26.0"}.String()
	want := "ray-operator v1.2.3 (abc) go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH
	if got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestCollector(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Info{Version: "v1.2.3", Revision: "abc", GoVersion: "go1.26.0"}.Collector())
	want := `
# HELP ray_operator_build_info Always 1; the labels describe the running ray-operator build.
# TYPE ray_operator_build_info gauge
ray_operator_build_info{goversion="go1.26.0",revision="abc",version="v1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ray_operator_build_info"); err != nil {
		t.Error(err)
	}
}
