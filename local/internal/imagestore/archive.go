package imagestore

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// archiveImage is one image of an archive with the references the archive
// names it by (none when it names it by none).
type archiveImage struct {
	names []string
	img   v1.Image
	// digest is the manifest digest the archive gives it.
	digest v1.Hash
}

// errNotArchive marks a file that is no image archive.
var errNotArchive = errors.New("not an image archive (want a `docker save` tarball, an OCI layout directory or an OCI layout in a tar)")

// The annotations an OCI layout names its images by: containerd's (a
// full reference) and the OCI one (a full reference, or only a tag).
const (
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

// readArchive reads the images of the archive at p: a directory holding an
// OCI layout, or a tar that is a `docker save` tarball (manifest.json) or
// an OCI layout (oci-layout and index.json), which it extracts under tmp/.
// cleanup removes what it extracted.
func (s *Store) readArchive(p string) (images []archiveImage, cleanup func(), err error) {
	cleanup = func() {}
	info, err := os.Stat(p)
	if err != nil {
		return nil, cleanup, err
	}
	if info.IsDir() {
		images, err = s.readLayout(p)
		return images, cleanup, err
	}
	top, err := tarTopFiles(p)
	if err != nil {
		return nil, cleanup, err
	}
	switch {
	case top["manifest.json"]:
		images, err = readDockerArchive(p)
		return images, cleanup, err
	case top["oci-layout"] && top["index.json"]:
		dir, err := os.MkdirTemp(filepath.Join(s.dir, "tmp"), "archive-")
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		if err := extractTar(p, dir); err != nil {
			return nil, cleanup, err
		}
		images, err = s.readLayout(dir)
		return images, cleanup, err
	}
	return nil, cleanup, fmt.Errorf("%w: the tar has neither manifest.json nor oci-layout and index.json", errNotArchive)
}

// tarTopFiles lists the regular files at the top of the tar at p.
func tarTopFiles(p string) (map[string]bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return nil, fmt.Errorf("%w: it is gzip-compressed; decompress it first (gunzip)", errNotArchive)
	}
	top := map[string]bool{}
	tr := tar.NewReader(br)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return top, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNotArchive, err)
		}
		if n := path.Clean(hdr.Name); hdr.Typeflag == tar.TypeReg && !strings.Contains(n, "/") {
			top[n] = true
		}
	}
}

// readDockerArchive reads a `docker save` tarball's images, named by their
// RepoTags.
func readDockerArchive(p string) ([]archiveImage, error) {
	opener := func() (io.ReadCloser, error) { return os.Open(p) }
	m, err := tarball.LoadManifest(opener)
	if err != nil {
		return nil, fmt.Errorf("%w: manifest.json: %w", errNotArchive, err)
	}
	images := make([]archiveImage, 0, len(m))
	for i, d := range m {
		var tag *name.Tag
		if len(d.RepoTags) > 0 {
			t, err := name.NewTag(d.RepoTags[0])
			if err != nil {
				return nil, fmt.Errorf("image %d of the archive: RepoTags: %w", i+1, err)
			}
			tag = &t
		} else if len(m) > 1 {
			return nil, fmt.Errorf("image %d of the archive has no RepoTags, and the archive holds %d images", i+1, len(m))
		}
		img, err := tarball.Image(opener, tag)
		if err != nil {
			return nil, fmt.Errorf("image %d of the archive: %w", i+1, err)
		}
		digest, err := img.Digest()
		if err != nil {
			return nil, fmt.Errorf("image %d of the archive: %w", i+1, err)
		}
		images = append(images, archiveImage{names: d.RepoTags, img: img, digest: digest})
	}
	return images, nil
}

// readLayout reads the images an OCI layout's index.json lists, named by
// their annotations; an index among them gives its manifest for the
// node's platform.
func (s *Store) readLayout(dir string) ([]archiveImage, error) {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotArchive, err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotArchive, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("%w: index.json: %w", errNotArchive, err)
	}
	var images []archiveImage
	for _, d := range im.Manifests {
		img, digest, err := s.platformImage(idx, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Digest, describe(err))
		}
		images = append(images, archiveImage{names: layoutNames(d.Annotations), img: img, digest: digest})
	}
	if len(images) == 0 {
		return nil, fmt.Errorf("%w: index.json lists no image", errNotArchive)
	}
	return images, nil
}

// platformImage is the image d names in idx, or for an index, its image
// for the node's platform.
func (s *Store) platformImage(idx v1.ImageIndex, d v1.Descriptor) (v1.Image, v1.Hash, error) {
	if d.MediaType.IsImage() {
		img, err := idx.Image(d.Digest)
		return img, d.Digest, err
	}
	if !d.MediaType.IsIndex() {
		return nil, v1.Hash{}, fmt.Errorf("%w: media type %q is neither an image nor an index", errNotArchive, d.MediaType)
	}
	child, err := idx.ImageIndex(d.Digest)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	if err := verifyBlob(child.RawManifest, d.Digest); err != nil {
		return nil, v1.Hash{}, err
	}
	cm, err := child.IndexManifest()
	if err != nil {
		return nil, v1.Hash{}, err
	}
	want := s.opts.Platform
	for _, c := range cm.Manifests {
		if c.MediaType.IsImage() && c.Platform != nil && c.Platform.OS == want.OS && c.Platform.Architecture == want.Architecture {
			img, err := child.Image(c.Digest)
			return img, c.Digest, err
		}
	}
	return nil, v1.Hash{}, &PullError{Cause: CauseNoPlatform, Err: fmt.Errorf("the index has no image for %s/%s", want.OS, want.Architecture)}
}

// layoutNames is the reference an OCI layout's annotations name an image
// by: containerd's full name, or the OCI ref name when it is a reference
// with a repository (not only a tag).
func layoutNames(annotations map[string]string) []string {
	if n := annotations[annotationContainerdName]; n != "" {
		return []string{n}
	}
	if n := annotations[annotationRefName]; strings.ContainsAny(n, "/:") {
		return []string{n}
	}
	return nil
}

// verifyBlob checks that the bytes raw returns have the digest want, as a
// registry pull does (an OCI layout's files are named by digest, not
// checked against it when read).
func verifyBlob(raw func() ([]byte, error), want v1.Hash) error {
	data, err := raw()
	if err != nil {
		return err
	}
	got, _, err := v1.SHA256(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: content is %s, named %s", errDigest, got, want)
	}
	return nil
}

// verifyImage checks the manifest's and the config's digests; the layers'
// are checked as they are unpacked.
func verifyImage(ai archiveImage) error {
	if err := verifyBlob(ai.img.RawManifest, ai.digest); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	m, err := ai.img.Manifest()
	if err != nil {
		return err
	}
	if err := verifyBlob(ai.img.RawConfigFile, m.Config.Digest); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// extractTar writes the regular files and directories of the tar at p
// under dir, every path resolved inside dir.
func extractTar(p, dir string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", errNotArchive, err)
		}
		if err := extractEntry(root, hdr, tr); err != nil {
			return fmt.Errorf("%w: %s: %w", errNotArchive, hdr.Name, err)
		}
	}
}

func extractEntry(root *os.Root, hdr *tar.Header, r io.Reader) error {
	n := path.Clean(strings.TrimPrefix(hdr.Name, "/"))
	switch hdr.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(n, 0o700)
	case tar.TypeReg:
		if d := path.Dir(n); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
		out, err := root.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, r)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return nil // an OCI layout holds only files and directories
}
