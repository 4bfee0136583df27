package main

import (
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// summarize prints each platform's image (digest, layers, compressed and
// uncompressed size) and, last, the index digest.
func summarize(out io.Writer, idx v1.ImageIndex) error {
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		s, err := sizeOf(img)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s %s: %d layers, %s compressed, %s uncompressed\n",
			d.Platform, d.Digest, s.layers, mib(s.compressed), mib(s.uncompressed)); err != nil {
			return err
		}
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, digest)
	return err
}

type imageSize struct {
	layers                   int
	compressed, uncompressed int64
}

func sizeOf(img v1.Image) (imageSize, error) {
	layers, err := img.Layers()
	if err != nil {
		return imageSize{}, err
	}
	s := imageSize{layers: len(layers)}
	for _, l := range layers {
		c, err := l.Size()
		if err != nil {
			return s, err
		}
		r, err := l.Uncompressed()
		if err != nil {
			return s, err
		}
		u, err := io.Copy(io.Discard, r)
		_ = r.Close()
		if err != nil {
			return s, err
		}
		s.compressed += c
		s.uncompressed += u
	}
	return s, nil
}

func mib(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
