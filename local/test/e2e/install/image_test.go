package install_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// imageBuilder runs hack/image, the program behind `make image` and `make
// push`, with the Makefile's settings: the operator built static and
// stamped with a version, at /ray-operator with /manager beside it.
type imageBuilder struct {
	tool, root, dir     string
	revision, epoch     string
	lastBuild, lastPush time.Duration
}

// newImageBuilder builds hack/image into dir.
func newImageBuilder(ctx context.Context, root, dir string) (*imageBuilder, error) {
	b := &imageBuilder{tool: filepath.Join(dir, "image"), root: root, dir: dir}
	build := exec.CommandContext(ctx, "go", "build", "-o", b.tool, ".")
	build.Dir = filepath.Join(root, "hack", "image")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building hack/image: %w\n%s", err, out)
	}
	var err error
	if b.revision, err = git(ctx, root, "rev-parse", "HEAD"); err != nil {
		return nil, err
	}
	if b.epoch, err = git(ctx, root, "log", "-1", "--format=%ct"); err != nil {
		return nil, err
	}
	return b, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// imageSource is what hack/image builds an image from: a main package of
// a module directory, how it is linked, and what the image records.
type imageSource struct {
	// dir is the module directory, pkg the main package in it.
	dir, pkg, ldflags string
	// version, revision, source and epoch are the OCI labels and the
	// files' time.
	version, revision, source, epoch string
	// binaryPath is the entrypoint, links its further paths.
	binaryPath, links string
	// env is added to go build's environment.
	env []string
}

// ours is this source stamped with version, as `make image` builds it.
func (b *imageBuilder) ours(version string) imageSource {
	return imageSource{
		dir: b.root, pkg: "./cmd/ray-operator",
		ldflags: "-X github.com/ray-operator/ray-operator/internal/buildinfo.version=" + version,
		version: version, revision: b.revision, source: "https://github.com/ray-operator/ray-operator", epoch: b.epoch,
		binaryPath: "/ray-operator", links: "/manager",
	}
}

// buildAndPush builds the image of this source stamped with version, for
// this machine's platform (the node's), and pushes it to repository:version;
// it returns the pushed reference with its digest.
func (b *imageBuilder) buildAndPush(ctx context.Context, repository, version string) (string, error) {
	return b.buildAndPushSource(ctx, b.ours(version), repository+":"+version)
}

// buildAndPushSource builds src's image for this machine's platform and
// pushes it to ref; it returns the pushed reference with its digest.
func (b *imageBuilder) buildAndPushSource(ctx context.Context, src imageSource, ref string) (string, error) {
	layout := filepath.Join(b.dir, "image-"+strings.NewReplacer("/", "_", ":", "_").Replace(ref))
	began := time.Now()
	_, err := b.run(ctx, src.env, "build", "-dir", src.dir, "-package", src.pkg, "-ldflags", src.ldflags,
		"-version", src.version, "-revision", src.revision, "-source", src.source,
		"-source-date-epoch", src.epoch, "-binary-path", src.binaryPath, "-links", src.links,
		"-platforms", "linux/"+runtime.GOARCH, "-image", ref, "-layout", layout)
	if err != nil {
		return "", err
	}
	b.lastBuild = time.Since(began)
	began = time.Now()
	out, err := b.run(ctx, nil, "push", "-layout", layout, ref)
	if err != nil {
		return "", err
	}
	b.lastPush = time.Since(began)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1], nil
}

func (b *imageBuilder) run(ctx context.Context, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, b.tool, args...)
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/image %s: %w", args[0], err)
	}
	return string(out), nil
}
