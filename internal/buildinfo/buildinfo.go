// Package buildinfo is the operator's one source of its own version: what
// `ray-operator --version` prints, what the build info metric reports, and
// what the operator records on the objects it creates
// (ray.io/kuberay-version, RAY_USAGE_STATS_EXTRA_TAGS).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// version is set at link time by the Makefile:
//
//	-ldflags "-X github.com/ray-operator/ray-operator/internal/buildinfo.version=v1.2.3"
var version string

// DevVersion is the version of a build that was given none and whose module
// version Go could not stamp (go test, go run outside a VCS checkout).
const DevVersion = "dev"

// Info describes the running binary.
type Info struct {
	// Version is the operator version.
	Version string
	// Revision is the VCS commit the binary was built from, with a
	// "-dirty" suffix for a modified work tree; empty when unknown.
	Revision string
	// GoVersion is the Go release the binary was built with.
	GoVersion string
}

var read = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return infoFrom(version, bi)
})

// Get returns the running binary's build information.
func Get() Info { return read() }

// Version is the operator version: the link-time version when set, else
// the module version Go stamped, else DevVersion.
func Version() string { return Get().Version }

// String is the one-line form `--version` prints.
func (i Info) String() string {
	s := "ray-operator " + i.Version
	if i.Revision != "" {
		s += " (" + i.Revision + ")"
	}
	return fmt.Sprintf("%s %s %s/%s", s, i.GoVersion, runtime.GOOS, runtime.GOARCH)
}

// infoFrom derives Info from a link-time version and Go's build
// information (nil when the binary carries none).
func infoFrom(linked string, bi *debug.BuildInfo) Info {
	info := Info{Version: linked, GoVersion: runtime.Version()}
	if bi == nil {
		info.Version = orDev(info.Version)
		return info
	}
	if info.Version == "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	info.Version = orDev(info.Version)
	info.Revision = revision(bi.Settings)
	return info
}

func revision(settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

func orDev(v string) string {
	if v == "" {
		return DevVersion
	}
	return v
}

// Collector is the ray_operator_build_info gauge: always 1, with the
// version, revision and goversion labels, so that dashboards can tell
// which operator build is running.
func (i Info) Collector() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ray_operator_build_info",
		Help: "Always 1; the labels describe the running ray-operator build.",
		ConstLabels: prometheus.Labels{
			"version":   i.Version,
			"revision":  i.Revision,
			"goversion": i.GoVersion,
		},
	})
	g.Set(1)
	return g
}
