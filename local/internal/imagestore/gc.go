package imagestore

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// GCPolicy says when and how far garbage collection removes images.
type GCPolicy struct {
	// HighBytes: collection runs when the store's images take more than
	// this. Zero collects on every call (collection on request).
	HighBytes int64
	// LowBytes: collection stops once the images take no more than this.
	LowBytes int64
	// MinAge keeps images used (pulled or looked up) more recently than
	// this, so an image handed to a container about to start is not
	// removed before the container shows up as in use.
	MinAge time.Duration
}

// List returns the stored images, least recently used first.
func (s *Store) List() ([]Image, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list()
}

func (s *Store) list() ([]Image, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, "images"))
	if err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	images := make([]Image, 0, len(entries))
	for _, e := range entries {
		img, err := s.read(e.Name())
		if err != nil {
			return nil, fmt.Errorf("image store: %w", err)
		}
		images = append(images, img)
	}
	slices.SortFunc(images, func(a, b Image) int {
		return cmp.Or(a.LastUsed.Compare(b.LastUsed), cmp.Compare(a.Digest.Hex, b.Digest.Hex))
	})
	return images, nil
}

// GC removes images no container uses (inUse holds the manifest digests
// that are used), least recently used first, when the store holds more than
// p.HighBytes, until it holds no more than p.LowBytes. It returns the
// images it removed.
func (s *Store) GC(inUse map[v1.Hash]bool, p GCPolicy) ([]Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.lockAcross()
	if err != nil {
		return nil, err
	}
	defer unlock()
	images, err := s.list()
	if err != nil {
		return nil, err
	}
	var total int64
	for _, img := range images {
		total += img.Size
	}
	if p.HighBytes > 0 && total <= p.HighBytes {
		return nil, nil
	}
	var removed []Image
	var errs []error
	cutoff := s.opts.Now().Add(-p.MinAge)
	for _, img := range images {
		if total <= p.LowBytes {
			break
		}
		if inUse[img.Digest] || img.LastUsed.After(cutoff) {
			continue
		}
		if err := s.remove(img.Digest.Hex); err != nil {
			errs = append(errs, err)
			continue
		}
		total -= img.Size
		removed = append(removed, img)
	}
	return removed, errors.Join(errs...)
}

// remove moves an image to trash/ (so it is gone from images/ at once,
// never seen half-removed) and deletes it there.
func (s *Store) remove(hex string) error {
	trash, err := os.MkdirTemp(filepath.Join(s.dir, "trash"), hex[:12]+"-")
	if err != nil {
		return fmt.Errorf("image store: %w", err)
	}
	if err := os.Rename(filepath.Join(s.dir, "images", hex), filepath.Join(trash, "image")); err != nil {
		return fmt.Errorf("image store: %w", err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("image store: %w", err)
	}
	return nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }
