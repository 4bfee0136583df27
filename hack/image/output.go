package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The names of an image in an OCI layout's index.json, as BuildKit's OCI
// exporter writes them: the tag (`skopeo copy oci:DIR:TAG`) and the full
// name (`ctr image import`).
const (
	refNameAnnotation        = "org.opencontainers.image.ref.name"
	containerdNameAnnotation = "io.containerd.image.name"
)

// writeLayout replaces dir with an OCI image layout whose index.json holds
// one entry, the index, named ref.
func writeLayout(dir string, idx v1.ImageIndex, ref name.Reference) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		refNameAnnotation:        ref.Identifier(),
		containerdNameAnnotation: ref.Name(),
	}))
}

// readLayout returns the index written by writeLayout.
func readLayout(dir string) (v1.ImageIndex, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s: want one index in index.json, found %d entries", dir, len(m.Manifests))
	}
	return top.ImageIndex(m.Manifests[0].Digest)
}

// platformImageOf returns the index's image for the platform.
func platformImageOf(idx v1.ImageIndex, want v1.Platform) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.Equals(want) {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("the index has no image for %s", want)
}

// writeTarball writes the index's image for the platform as a tarball
// `docker load` reads (docker's format holds one image per tag), tagged ref.
func writeTarball(file string, idx v1.ImageIndex, p v1.Platform, ref name.Reference) error {
	img, err := platformImageOf(idx, p)
	if err != nil {
		return err
	}
	tag, ok := ref.(name.Tag)
	if !ok {
		return fmt.Errorf("%s: the tarball needs a tag, not a digest", ref)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return tarball.WriteToFile(file, tag, img)
}
