package podinputs

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/distribution/reference"
)

// systemPath is the PATH of Debian-based images after their own directories.
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Image is what an image reference stands for on this machine: the image's
// configuration (ENTRYPOINT, CMD, Env, WORKDIR) with local executables in it.
type Image struct {
	// Ref is the image reference as the pod gave it.
	Ref string
	// Local says what the reference maps to, for messages and docs.
	Local string
	// Entrypoint is the image's ENTRYPOINT (nil when it has none).
	Entrypoint []string
	// Cmd is the image's CMD.
	Cmd []string
	// Env is the image's environment, KEY=VALUE.
	Env []string
	// WorkingDir is the image's WORKDIR ("" for the runtime's default, /).
	WorkingDir string
	// UID is the image's USER, which runs its containers unless their
	// securityContext sets runAsUser. The local images run as root (0);
	// a pod with runAsNonRoot sets runAsUser to run them.
	UID int64
	// Mounts are what the image holds beyond the system directories every
	// container gets: host directories or files shown read-only.
	Mounts []ImageMount
	// Registry says that no rule maps the reference: it runs from its
	// registry's image, pulled through the node's image store (see
	// RegistryImage); RootFS is empty until it is.
	Registry bool
	// Offline, on a registry image, is the local image a rule maps its
	// reference to: what runs when its registry does not serve it.
	Offline *Image
	// RootFS is the unpacked root of a registry image, the lower layer of
	// its containers' roots (empty for the local images).
	RootFS string
	// GID is the group the image's USER names ("user:group"), nil when it
	// names none: the user's group in the image's /etc/passwd then.
	GID *int64
	// RayRelease, when set, is the Ray release the image names and this
	// machine has yet to install: ImageTable.Pull installs it, and only
	// then does the image's Ray mount have its source.
	RayRelease string
}

// ImageMount is a host directory or file an image shows read-only.
type ImageMount struct {
	// Source is the host path; Destination where the container sees it.
	Source, Destination string
}

// RayPythonHome is where the Ray images keep their Python environment, and
// where the Ray virtualenv appears in containers.
const RayPythonHome = "/home/ray/anaconda3"

// Rule maps the image references it matches to one local image.
type Rule struct {
	// Pattern is the short form of the references the rule matches, as
	// error messages list it ("rayproject/ray*").
	Pattern string
	// Matches says in words which references the rule matches.
	Matches string
	// Image is the local image; Resolve fills in its Ref.
	Image Image
	// match reports whether a normalized repository path (without the
	// registry: "library/redis", "rayproject/ray") belongs to the rule.
	match func(repository string) bool
	// adapt, when set, fits the rule's image to the reference (the Ray
	// rule: the virtualenv of the tag's release).
	adapt func(named reference.Named, img Image) (Image, error)
}

// ImageTable maps image references to local images by ordered rules: the
// first rule that matches a reference wins.
type ImageTable struct {
	rules []Rule
	ray   *rayReleases
}

// DefaultImages is the table of the local node: Ray images run from the Ray
// virtualenv of their tag's release (ray.go), Redis images run the
// redis-server binary at redisServer.
func DefaultImages(ray RayImages, redisServer string) ImageTable {
	releases := newRayReleases(ray)
	return ImageTable{rules: []Rule{rayRule(releases), redisRule(redisServer)}, ray: releases}
}

// operatorImage is the last path element of the repository `make image`
// names (ghcr.io/ray-operator/ray-operator): the operator, not a Ray image,
// so the Ray rule leaves it to its registry. Its default tag, latest, would
// otherwise name a Ray release, and a registry that does not serve it would
// run a Ray virtualenv in its place instead of failing the pull.
const operatorImage = "ray-operator"

func rayRule(releases *rayReleases) Rule {
	venv := releases.Pinned.Dir
	return Rule{
		Pattern: "rayproject/ray*",
		Matches: `rayproject/ray, rayproject/ray-ml, anyscale/ray and any repository whose last path element is "ray" or starts with "ray-" (but is not "ray-operator", this operator's image), from any registry, at any digest, or at a tag naming a Ray release (X.Y.Z, latest or nightly, with -pyNNN, -cpu, -gpu, -cuNNN, -aarch64 variants), whose virtualenv it runs`,
		Image: Image{
			Local: rayLocal(releases.Pinned),
			// rayproject/ray sets no ENTRYPOINT; its CMD is its base's shell.
			Cmd: []string{"/bin/bash"},
			Env: []string{
				"PATH=" + path.Join(RayPythonHome, "bin") + ":" + systemPath,
				"VIRTUAL_ENV=" + RayPythonHome,
				"HOME=/home/ray",
				"LANG=C.UTF-8",
			},
			WorkingDir: "/home/ray",
			Mounts:     []ImageMount{{Source: venv, Destination: RayPythonHome}},
		},
		match: func(repository string) bool {
			last := path.Base(repository)
			return last == "ray" || strings.HasPrefix(last, "ray-") && last != operatorImage
		},
		adapt: releases.adapt,
	}
}

func redisRule(hostServer string) Rule {
	// A server outside the system directories appears where the redis
	// image keeps its own.
	server := hostServer
	var mounts []ImageMount
	if dir := filepath.Dir(server); !slices.Contains(strings.Split(systemPath, ":"), dir) {
		server = "/usr/local/bin/redis-server"
		mounts = []ImageMount{{Source: hostServer, Destination: server}}
	}
	return Rule{
		Pattern: "redis*",
		Matches: `redis and any repository whose last path element starts with "redis" (bitnami/redis, redis/redis-stack-server), from any registry, at any tag or digest`,
		Image: Image{
			Local: "redis-server " + hostServer,
			// The redis image's CMD is "redis-server". Its ENTRYPOINT script
			// runs redis-server with the arguments when the first one is an
			// option or a .conf file (so `args: ["--requirepass", ...]`
			// alone starts a server), else runs the arguments as a command;
			// it also drops privileges, which a local process does not need.
			Entrypoint: redisEntrypoint(server),
			Cmd:        []string{server},
			Env:        []string{"PATH=" + systemPath},
			WorkingDir: "/data",
			Mounts:     mounts,
		},
		match: func(repository string) bool {
			return strings.HasPrefix(path.Base(repository), "redis")
		},
	}
}

// redisEntrypoint is the redis image's entrypoint script as a shell
// command: args run as a command unless the first is an option or a .conf
// file, which are arguments of server.
func redisEntrypoint(server string) []string {
	quoted := "'" + strings.ReplaceAll(server, "'", `'\''`) + "'"
	return []string{"/bin/sh", "-c", `case "$1" in -*|*.conf) set -- ` + quoted + ` "$@" ;; esac; exec "$@"`, "docker-entrypoint.sh"}
}

// Resolve returns the local image for ref. A reference no rule matches is a
// *NoLocalImageError; one that does not parse is a *ConfigError with reason
// InvalidImageName.
func (t ImageTable) Resolve(ref string) (Image, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return Image{}, &ConfigError{
			Reason:  ReasonInvalidImageName,
			Message: fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: %v", ref, ref, err),
			Err:     err,
		}
	}
	repository := reference.Path(named)
	for _, r := range t.rules {
		if r.match(repository) {
			img := r.Image
			img.Ref = ref
			img.Entrypoint = slices.Clone(img.Entrypoint)
			img.Cmd = slices.Clone(img.Cmd)
			img.Env = slices.Clone(img.Env)
			img.Mounts = slices.Clone(img.Mounts)
			if r.adapt != nil {
				return r.adapt(named, img)
			}
			return img, nil
		}
	}
	return Image{}, &NoLocalImageError{Ref: ref, Local: t.patterns()}
}

// Rules returns the table's rules in order, for docs and --help.
func (t ImageTable) Rules() []Rule { return slices.Clone(t.rules) }

func (t ImageTable) patterns() []string {
	out := make([]string, 0, len(t.rules))
	for _, r := range t.rules {
		out = append(out, r.Pattern)
	}
	return out
}
