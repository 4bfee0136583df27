package podinputs

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/distribution/reference"

	"github.com/ray-operator/ray-operator/local/internal/rayvenv"
)

// RayInstaller installs the virtualenv of a Ray release on first use
// (*rayvenv.Installer, which runs hack/ray-venv.sh).
type RayInstaller interface {
	Install(ctx context.Context, version string) (rayvenv.Venv, error)
}

// RayImages is what Ray images run.
type RayImages struct {
	// Pinned is the virtualenv of the release the project pins (2.60.0):
	// images of that release, and those whose tag names no release
	// (latest, nightly, none, a digest), run it with no install.
	Pinned rayvenv.Venv
	// Installer installs the other releases. Without one, every Ray image
	// runs Pinned, and the Pulled event says so.
	Installer RayInstaller
}

// rayReleases maps Ray image references to the virtualenvs of their
// releases, and remembers the ones installed since the node started.
type rayReleases struct {
	RayImages
	mu        sync.Mutex
	installed map[string]rayvenv.Venv
}

func newRayReleases(ray RayImages) *rayReleases {
	return &rayReleases{RayImages: ray, installed: map[string]rayvenv.Venv{ray.Pinned.Version: ray.Pinned}}
}

// official says whether a repository is one of Ray's own, whose tags all
// name a release; another repository's tag (a user's build) may not.
func official(repository string) bool {
	return strings.HasPrefix(repository, "rayproject/") || strings.HasPrefix(repository, "anyscale/")
}

// adapt points img at the virtualenv of the release named's tag asks for,
// or leaves that release for Pull to install.
func (r *rayReleases) adapt(named reference.Named, img Image) (Image, error) {
	tag := ""
	if tagged, ok := named.(reference.Tagged); ok {
		tag = tagged.Tag()
	}
	req, err := rayvenv.ParseTag(tag, r.Pinned.Version)
	if err != nil && official(reference.Path(named)) {
		return Image{}, err
	}
	if err != nil { // a user's build: its tag says nothing of its Ray
		req = rayvenv.Request{Version: r.Pinned.Version}
	}
	if req.Python != "" && req.Python != r.Pinned.Python {
		return Image{}, fmt.Errorf("tag %q asks for Python %s, but this node's Ray virtualenvs run Python %s (the system's python3; tags with -py%s or no -py run)",
			tag, req.Python, r.Pinned.Python, strings.ReplaceAll(r.Pinned.Python, ".", ""))
	}
	r.mu.Lock()
	venv, ok := r.installed[req.Version]
	r.mu.Unlock()
	switch {
	case ok:
		return withVenv(img, venv), nil
	case r.Installer == nil:
		img = withVenv(img, r.Pinned)
		img.Local += fmt.Sprintf(", for Ray %s: this node installs no other release", req.Version)
		return img, nil
	}
	img = withVenv(img, rayvenv.Venv{}) // no source until Pull installs one
	img.RayRelease = req.Version
	img.Local = fmt.Sprintf("Ray %s virtualenv, not installed yet", req.Version)
	return img, nil
}

// pull installs img's release and points img at it.
func (r *rayReleases) pull(ctx context.Context, img Image) (Image, error) {
	venv, err := r.Installer.Install(ctx, img.RayRelease)
	if err != nil {
		return Image{}, err
	}
	if venv.Version != img.RayRelease {
		return Image{}, fmt.Errorf("the Ray %s install holds Ray %s (%s)", img.RayRelease, venv.Version, venv.Dir)
	}
	r.mu.Lock()
	r.installed[venv.Version] = venv
	r.mu.Unlock()
	return withVenv(img, venv), nil
}

// withVenv is img running venv at RayPythonHome.
func withVenv(img Image, venv rayvenv.Venv) Image {
	img.RayRelease = ""
	img.Local = rayLocal(venv)
	for i := range img.Mounts {
		if img.Mounts[i].Destination == RayPythonHome {
			img.Mounts[i].Source = venv.Dir
		}
	}
	return img
}

// rayLocal names venv for messages and events.
func rayLocal(venv rayvenv.Venv) string {
	return fmt.Sprintf("Ray %s virtualenv %s at %s", venv.Version, venv.Dir, RayPythonHome)
}

// Pull makes img present on this machine: a Ray image whose release is not
// installed yet gets it installed (minutes the first time; pods of one
// release share one install). Any other image is present already.
func (t ImageTable) Pull(ctx context.Context, img Image) (Image, error) {
	if img.RayRelease == "" {
		return img, nil
	}
	return t.ray.pull(ctx, img)
}
