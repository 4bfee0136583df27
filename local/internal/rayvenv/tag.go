package rayvenv

import (
	"fmt"
	"regexp"
	"strings"
)

// Request is what a Ray image tag asks for.
type Request struct {
	// Version is the Ray release, X.Y.Z.
	Version string
	// Python is the Python the tag names ("3.11"), "" when it names none.
	Python string
}

var (
	releasePattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	pythonPattern  = regexp.MustCompile(`^py3([0-9]+)$`)
	cudaPattern    = regexp.MustCompile(`^cu[0-9]+$`)
)

// variants are the tag suffixes that change what else the image holds
// (CPU or GPU builds, the architecture, a slim or extra set of packages),
// not the Ray release: every one runs the same Ray on this machine.
var variants = map[string]bool{"cpu": true, "gpu": true, "aarch64": true, "slim": true, "extra": true}

// ParseTag reads a Ray image tag: X.Y.Z, latest or nightly, then any of
// -pyNNN, -cpu, -gpu, -cuNNN, -aarch64, -slim, -extra ("2.52.0-py311-cpu").
// An empty tag (a reference without one, or with a digest only), latest
// and nightly name current, the newest release the node pins.
func ParseTag(tag, current string) (Request, error) {
	if tag == "" {
		return Request{Version: current}, nil
	}
	parts := strings.Split(tag, "-")
	req := Request{Version: parts[0]}
	switch {
	case parts[0] == "latest" || parts[0] == "nightly":
		req.Version = current
	case !releasePattern.MatchString(parts[0]):
		return Request{}, fmt.Errorf("tag %q names no Ray release: a Ray image tag is X.Y.Z, latest or nightly, then -pyNNN, -cpu, -gpu, -cuNNN or -aarch64", tag)
	}
	for _, p := range parts[1:] {
		if m := pythonPattern.FindStringSubmatch(p); m != nil {
			req.Python = "3." + m[1]
			continue
		}
		if !variants[p] && !cudaPattern.MatchString(p) {
			return Request{}, fmt.Errorf("tag %q: %q is no Ray image variant (-pyNNN, -cpu, -gpu, -cuNNN, -aarch64, -slim, -extra)", tag, p)
		}
	}
	return req, nil
}
