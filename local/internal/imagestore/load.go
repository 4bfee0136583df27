package imagestore

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
)

// Load brings the images of the archive at p (a `docker save` tarball, or
// an OCI layout as a directory or a tar) into the store as a pull would:
// every digest verified, each image unpacked once for the node's platform,
// and each recorded under the references the archive names it by (RepoTags;
// a layout's image name annotations), or under names when given (for an
// archive of one image). Pods then find it by those references with
// imagePullPolicy IfNotPresent or Never; Always still asks the registry.
// Loaded images are collected as pulled ones are: kept while a pod uses
// them, removed when unused and the disk needs room.
//
// A failure leaves the store as it was: no reference recorded, no image
// this load unpacked kept. Load holds the store's cross-process lock, so
// it may run beside the node that owns the store (see Options.Guest).
func (s *Store) Load(p string, names []string) ([]Image, error) {
	images, cleanup, err := s.readArchive(p)
	defer cleanup()
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", p, err)
	}
	if err := nameImages(images, names); err != nil {
		return nil, fmt.Errorf("load %s: %w", p, err)
	}
	unlock, err := s.lockAcross()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var created []string
	for _, ai := range images {
		made, err := s.loadOne(ai)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("load %s: %s: %w", p, ai.names[0], err), s.removeAll(created))
		}
		if made {
			created = append(created, ai.digest.Hex)
		}
	}
	return s.record(p, images, created)
}

// nameImages gives every image its fully qualified references: names for
// the archive's only image, else the archive's.
func nameImages(images []archiveImage, names []string) error {
	if len(names) > 0 {
		if len(images) != 1 {
			return fmt.Errorf("a name was given but the archive holds %d images", len(images))
		}
		images[0].names = names
	}
	for i := range images {
		if len(images[i].names) == 0 {
			return fmt.Errorf("image %d (%s) has no name in the archive: give one", i+1, images[i].digest)
		}
		for j, n := range images[i].names {
			tag, err := name.NewTag(n)
			if err != nil {
				return fmt.Errorf("name %q: want a tag reference (repository:tag): %w", n, err)
			}
			images[i].names[j] = tag.Name()
		}
	}
	return nil
}

// loadOne verifies and unpacks ai unless the store holds it, and says
// whether it unpacked it.
func (s *Store) loadOne(ai archiveImage) (bool, error) {
	if err := verifyImage(ai); err != nil {
		return false, describe(err)
	}
	if present(filepath.Join(s.dir, "images", ai.digest.Hex)) {
		return false, nil
	}
	_, err, _ := s.unpacks.Do(ai.digest.String(), func() (any, error) {
		return nil, s.ensure(ai.names[0], ai.digest, ai.img)
	})
	if err != nil {
		return false, describe(err)
	}
	return true, nil
}

// describe words a PullError as its cause and error, without the pull's
// reference (an archive's image has none yet).
func describe(err error) error {
	var pe *PullError
	if errors.As(err, &pe) && pe.Err != nil {
		return fmt.Errorf("%s: %w", pe.Cause, pe.Err)
	}
	return err
}

// record writes the images' references and marks them used now; should
// that fail, it removes what the load unpacked.
func (s *Store) record(p string, images []archiveImage, created []string) ([]Image, error) {
	loaded := make([]Image, 0, len(images))
	for _, ai := range images {
		for _, n := range ai.names {
			if err := s.writeRef(n, ai.digest); err != nil {
				return nil, errors.Join(fmt.Errorf("load %s: %s: %w", p, n, err), s.removeAll(created))
			}
		}
		img, err := s.use(ai.names[0], ai.digest)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("load %s: %s: %w", p, ai.names[0], err), s.removeAll(created))
		}
		img.Ref = ai.names[0]
		loaded = append(loaded, img)
	}
	return loaded, nil
}

// removeAll removes the images of the manifest digests hexes.
func (s *Store) removeAll(hexes []string) error {
	var errs []error
	for _, h := range hexes {
		errs = append(errs, s.remove(h))
	}
	return errors.Join(errs...)
}
