package imagestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/singleflight"
)

// Image is an image in the store, unpacked for the node's platform.
type Image struct {
	// Ref is the fully qualified reference it was last pulled by.
	Ref string `json:"ref"`
	// Digest is the digest of the image's manifest for the node's platform
	// (for a multi-platform image, not the index's).
	Digest v1.Hash `json:"digest"`
	// Config is the image's runtime configuration: Entrypoint, Cmd, Env,
	// WorkingDir, User.
	Config v1.Config `json:"config"`
	// Size is what its root filesystem takes on disk, in bytes.
	Size int64 `json:"size"`
	// Pulled is when it was unpacked.
	Pulled time.Time `json:"pulled"`
	// LastUsed is when a pull or lookup last returned it.
	LastUsed time.Time `json:"-"`
	// RootFS is the directory of its unpacked root filesystem; containers
	// must use it read-only (as an overlay's lower layer).
	RootFS string `json:"-"`
}

// Options tune a Store; the zero value pulls for linux on this machine's
// architecture over http.DefaultTransport.
type Options struct {
	// Platform is the platform chosen from multi-platform images.
	Platform v1.Platform
	// Transport carries registry requests.
	Transport http.RoundTripper
	// Retry is the back-off of go-containerregistry's retries of temporary
	// failures within one pull (the node backs off between pulls itself);
	// the zero value tries twice, 200ms apart.
	Retry remote.Backoff
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Guest opens a store another process owns (the node's, from ray-local
	// load): tmp/ and trash/ are left as they are, since the owner's pulls
	// and removals may be under way there.
	Guest bool
}

// Store is an image store in one directory. Its methods are safe for
// concurrent use; one directory must have one Store at a time.
type Store struct {
	dir  string
	opts Options
	// unpacks makes concurrent pulls of one manifest digest unpack once.
	unpacks singleflight.Group
	// mu keeps GC from removing an image while a pull or lookup hands it
	// out (read side) and serialises GC runs (write side).
	mu sync.RWMutex
}

// Open opens (creating if needed) the store in dir and empties what an
// earlier process left half-done in tmp/ and trash/.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Platform.OS == "" {
		opts.Platform = v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	if opts.Retry.Steps == 0 {
		opts.Retry = remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 2}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Store{dir: dir, opts: opts}
	for _, d := range []string{"tmp", "trash"} {
		if opts.Guest {
			break
		}
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return nil, fmt.Errorf("image store: %w", err)
		}
	}
	for _, d := range []string{"images", "refs", "tmp", "trash"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("image store: %w", err)
		}
	}
	return s, nil
}

// Pull resolves ref (a tag or a digest) at its registry for the node's
// platform with the credentials keychain gives (anonymous when nil), and
// returns the image, unpacking it unless the store holds that manifest
// digest already. Any failure is a *PullError.
func (s *Store) Pull(ctx context.Context, ref string, keychain authn.Keychain) (Image, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return Image{}, &PullError{Ref: ref, Cause: CauseInvalidReference, Err: err}
	}
	if keychain == nil {
		keychain = authn.NewMultiKeychain()
	}
	img, err := remote.Image(r,
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(keychain),
		remote.WithPlatform(s.opts.Platform),
		remote.WithTransport(s.opts.Transport),
		remote.WithRetryBackoff(s.opts.Retry))
	if err != nil {
		return Image{}, classify(ref, manifestError(err))
	}
	digest, err := img.Digest()
	if err != nil {
		return Image{}, classify(ref, err)
	}
	if _, err, _ := s.unpacks.Do(digest.String(), func() (any, error) {
		return nil, s.ensure(r.Name(), digest, img)
	}); err != nil {
		return Image{}, classify(ref, err)
	}
	if err := s.writeRef(r.Name(), digest); err != nil {
		return Image{}, &PullError{Ref: ref, Cause: CauseStore, Err: err}
	}
	return s.use(ref, digest)
}

// manifestError names the failures go-containerregistry reports as plain
// text when it fetches a manifest: a digest reference whose manifest has
// another digest, an index without the node's platform.
func manifestError(err error) error {
	if strings.Contains(err.Error(), "does not match requested digest") {
		return fmt.Errorf("%w: %w", errDigest, err)
	}
	if strings.Contains(err.Error(), "no child with platform") {
		return &PullError{Cause: CauseNoPlatform, Err: err}
	}
	return err
}

// Present returns the image ref last resolved to (or the image of a digest
// reference) if the store holds it, without asking a registry: what
// imagePullPolicy IfNotPresent and Never use. ok is false when it does not.
func (s *Store) Present(ref string) (img Image, ok bool, err error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return Image{}, false, &PullError{Ref: ref, Cause: CauseInvalidReference, Err: err}
	}
	digest, err := s.readRef(r.Name())
	if errors.Is(err, fs.ErrNotExist) {
		d, isDigest := r.(name.Digest)
		if !isDigest {
			return Image{}, false, nil
		}
		if digest, err = v1.NewHash(d.DigestStr()); err != nil {
			return Image{}, false, &PullError{Ref: ref, Cause: CauseInvalidReference, Err: err}
		}
	} else if err != nil {
		return Image{}, false, &PullError{Ref: ref, Cause: CauseStore, Err: err}
	}
	img, err = s.use(ref, digest)
	if errors.Is(err, fs.ErrNotExist) {
		return Image{}, false, nil
	}
	return img, err == nil, err
}

// use returns the stored image of digest and records its use now.
func (s *Store) use(ref string, digest v1.Hash) (Image, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	img, err := s.read(digest.Hex)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Image{}, err
		}
		return Image{}, &PullError{Ref: ref, Cause: CauseStore, Err: err}
	}
	now := s.opts.Now()
	if err := os.Chtimes(s.recordPath(digest.Hex), now, now); err != nil {
		return Image{}, &PullError{Ref: ref, Cause: CauseStore, Err: err}
	}
	img.LastUsed = now
	return img, nil
}

// ensure unpacks img unless the store holds digest: into tmp/, renamed
// into images/ only when every layer applied and verified.
func (s *Store) ensure(ref string, digest v1.Hash, img v1.Image) error {
	final := filepath.Join(s.dir, "images", digest.Hex)
	if present(final) {
		return nil
	}
	tmp, err := os.MkdirTemp(filepath.Join(s.dir, "tmp"), digest.Hex[:12]+"-")
	if err != nil {
		return &PullError{Ref: ref, Cause: CauseStore, Err: err}
	}
	defer os.RemoveAll(tmp)
	rec, err := s.unpack(tmp, img)
	if err != nil {
		return err
	}
	rec.Ref, rec.Digest, rec.Pulled = ref, digest, s.opts.Now()
	data, err := json.Marshal(rec)
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "image.json"), data, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil && present(final) {
		err = nil // another process (a load beside the node) unpacked it first
	}
	if err != nil {
		return &PullError{Ref: ref, Cause: CauseStore, Err: err}
	}
	return nil
}

// present says whether the image directory dir is whole.
func present(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "image.json"))
	return err == nil
}

// unpack applies img's layers in order into dir/rootfs and returns its
// record (config and size).
func (s *Store) unpack(dir string, img v1.Image) (Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return Image{}, err
	}
	if cf.Architecture != "" && (cf.OS != s.opts.Platform.OS || cf.Architecture != s.opts.Platform.Architecture) {
		return Image{}, &PullError{Cause: CauseNoPlatform, Err: fmt.Errorf("image is for %s/%s, the node is %s/%s", cf.OS, cf.Architecture, s.opts.Platform.OS, s.opts.Platform.Architecture)}
	}
	layers, err := img.Layers()
	if err != nil {
		return Image{}, err
	}
	if len(layers) != len(cf.RootFS.DiffIDs) {
		return Image{}, fmt.Errorf("%w: the manifest has %d layers, the config %d diff IDs", errCorrupt, len(layers), len(cf.RootFS.DiffIDs))
	}
	rootfs := filepath.Join(dir, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		return Image{}, err
	}
	root, err := os.OpenRoot(rootfs)
	if err != nil {
		return Image{}, err
	}
	defer root.Close()
	for i, l := range layers {
		if err := unpackLayer(root, l, cf.RootFS.DiffIDs[i]); err != nil {
			d, _ := l.Digest()
			return Image{}, fmt.Errorf("layer %d (%s): %w", i+1, d, err)
		}
	}
	size, err := diskUsage(rootfs)
	if err != nil {
		return Image{}, err
	}
	return Image{Config: cf.Config, Size: size}, nil
}

func unpackLayer(root *os.Root, l v1.Layer, diffID v1.Hash) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return readError(err)
	}
	defer rc.Close()
	return applyLayer(root, rc, diffID.String())
}

// diskUsage is the space the files under dir take (blocks allocated, each
// hard-linked inode once).
func diskUsage(dir string) (int64, error) {
	var total int64
	seen := map[uint64]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			total += info.Size()
			return nil
		}
		if seen[st.Ino] {
			return nil
		}
		seen[st.Ino] = true
		total += st.Blocks * 512
		return nil
	})
	return total, err
}

func (s *Store) recordPath(hex string) string {
	return filepath.Join(s.dir, "images", hex, "image.json")
}

// read returns the stored image with manifest digest hex.
func (s *Store) read(hex string) (Image, error) {
	p := s.recordPath(hex)
	data, err := os.ReadFile(p)
	if err != nil {
		return Image{}, err
	}
	var img Image
	if err := json.Unmarshal(data, &img); err != nil {
		return Image{}, fmt.Errorf("%s: %w", p, err)
	}
	info, err := os.Stat(p)
	if err != nil {
		return Image{}, err
	}
	img.LastUsed = info.ModTime()
	img.RootFS = filepath.Join(s.dir, "images", hex, "rootfs")
	return img, nil
}

func (s *Store) refPath(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return filepath.Join(s.dir, "refs", hex.EncodeToString(sum[:]))
}

// writeRef records that ref (fully qualified) resolved to digest.
func (s *Store) writeRef(ref string, digest v1.Hash) error {
	f, err := os.CreateTemp(filepath.Join(s.dir, "refs"), ".tmp-")
	if err != nil {
		return err
	}
	_, err = f.WriteString(digest.String() + "\n" + ref + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.refPath(ref))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// readRef returns the digest ref (fully qualified) last resolved to.
func (s *Store) readRef(ref string) (v1.Hash, error) {
	data, err := os.ReadFile(s.refPath(ref))
	if err != nil {
		return v1.Hash{}, err
	}
	digest, _, _ := strings.Cut(string(data), "\n")
	return v1.NewHash(digest)
}
