package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The OCI labels the image config carries.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelCreated  = "org.opencontainers.image.created"
)

// Options say what to build: a Go main package, how to link it, and what
// the image records about it.
type Options struct {
	// Dir is the module directory go build runs in.
	Dir string
	// Package is the main package to build, relative to Dir.
	Package string
	// LDFlags are go build's -ldflags (the version stamp).
	LDFlags string
	// Version, Revision and Source are the OCI labels' values.
	Version, Revision, Source string
	// Created is the time of every layer entry and of the config: the
	// commit's time, so that two builds of one commit are equal.
	Created time.Time
	// Platforms are the images of the index, in order.
	Platforms []v1.Platform
	// BinaryPath is where the binary lies in the image: the entrypoint.
	BinaryPath string
	// Links are further paths of the binary (symlinks).
	Links []string
}

// Build compiles the binary for each platform and returns the image index
// of their images.
func Build(ctx context.Context, o Options) (v1.ImageIndex, error) {
	base, err := baseEntries()
	if err != nil {
		return nil, err
	}
	baseLayer, err := layer(base, o.Created)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "ray-operator-image-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range o.Platforms {
		img, err := platformImage(ctx, o, p, baseLayer, tmp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx, nil
}

func platformImage(ctx context.Context, o Options, p v1.Platform, baseLayer v1.Layer, tmp string) (v1.Image, error) {
	bin := filepath.Join(tmp, p.OS+"-"+p.Architecture)
	if err := goBuild(ctx, o, p, bin); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	binLayer, err := layer(binaryEntries(data, o.BinaryPath, o.Links), o.Created)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Created}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, configFile(o, p))
	if err != nil {
		return nil, err
	}
	return mutate.Append(img,
		mutate.Addendum{Layer: baseLayer, History: v1.History{Created: created, CreatedBy: "CA certificates, nonroot user and group, /tmp"}},
		mutate.Addendum{Layer: binLayer, History: v1.History{Created: created, CreatedBy: "go build " + o.Package}},
	)
}

func configFile(o Options, p v1.Platform) *v1.ConfigFile {
	return &v1.ConfigFile{
		Architecture: p.Architecture,
		OS:           p.OS,
		Variant:      p.Variant,
		Created:      v1.Time{Time: o.Created},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:       fmt.Sprint(NonRootUID),
			Entrypoint: []string{o.BinaryPath},
			WorkingDir: "/",
			Labels: map[string]string{
				LabelVersion:  o.Version,
				LabelRevision: o.Revision,
				LabelSource:   o.Source,
				LabelCreated:  o.Created.UTC().Format(time.RFC3339),
			},
		},
	}
}

// goBuild links a static binary (cgo off) for the platform without the
// build machine's paths (-trimpath). Like `make build` it asks for go's
// default VCS stamping (-buildvcs=auto) whatever GOFLAGS says (machines
// here set -buildvcs=false), so the binary reports its commit (--version,
// the ray_operator_build_info metric) when built in a checkout, and
// nothing, without failing, from a tree that is not one.
func goBuild(ctx context.Context, o Options, p v1.Platform, out string) error {
	env, err := platformEnv(p)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=auto", "-ldflags", o.LDFlags, "-o", out, o.Package)
	cmd.Dir = o.Dir
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", o.Package, err)
	}
	return nil
}

// platformEnv is go build's environment for the platform. The variant sets
// the instruction set level (GOAMD64, GOARM64, GOARM), and no variant sets
// the baseline, so that the binary runs wherever the index says it does
// whatever the build machine's go env says.
func platformEnv(p v1.Platform) ([]string, error) {
	env := []string{"GOOS=" + p.OS, "GOARCH=" + p.Architecture}
	v := p.Variant
	switch p.Architecture {
	case "amd64":
		env = append(env, "GOAMD64="+cmp.Or(v, "v1"))
	case "arm64":
		if v != "" && !strings.Contains(v, ".") {
			v += ".0"
		}
		env = append(env, "GOARM64="+cmp.Or(v, "v8.0"))
	case "arm":
		env = append(env, "GOARM="+cmp.Or(strings.TrimPrefix(v, "v"), "7"))
	default:
		if v != "" {
			return nil, fmt.Errorf("platform %s: no variant is known for %s", p, p.Architecture)
		}
	}
	return env, nil
}
