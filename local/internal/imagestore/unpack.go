package imagestore

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Whiteout names of the OCI image layer spec: ".wh.NAME" removes NAME of the
// layers below; ".wh..wh..opq" in a directory hides everything the layers
// below put in it.
const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
)

// applyLayer applies one uncompressed layer tar to the tree under root, and
// checks that the tar's sha256 is diffID (the image config's rootfs.diff_ids
// entry). Every path is resolved inside root: no entry, symlink or hard link
// of the layer reaches outside it.
func applyLayer(root *os.Root, layer io.Reader, diffID string) error {
	h := sha256.New()
	hashed := io.TeeReader(layer, h)
	tr := tar.NewReader(hashed)
	a := applier{root: root, created: map[string]bool{}}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return readError(err)
		}
		if err := a.apply(hdr, tr); err != nil {
			return err
		}
	}
	// The tar's end-of-archive blocks and any padding (GNU and Python tar
	// fill their last record) count in its digest.
	if _, err := io.Copy(io.Discard, hashed); err != nil {
		return readError(err)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != diffID {
		return fmt.Errorf("%w: uncompressed content is %s, the image config says %s", errDigest, got, diffID)
	}
	return nil
}

// readError marks an error reading a layer's stream as a corrupt layer
// unless it is the network's.
func readError(err error) error {
	if causeOf(err) == CauseUnreachable {
		return err
	}
	return fmt.Errorf("%w: %w", errCorrupt, err)
}

// entryError says that name could not be made: the store's fault when its
// disk failed, else the layer's (a path escaping the root, a hard link to
// nothing, an entry over a non-directory).
func entryError(name string, err error) error {
	if errors.Is(err, errCorrupt) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EROFS) || causeOf(err) == CauseUnreachable {
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("%w: %s: %w", errCorrupt, name, err)
}

// applier applies the entries of one layer.
type applier struct {
	root *os.Root
	// created holds the paths this layer made, which an opaque whiteout in
	// the same layer keeps.
	created map[string]bool
}

func (a *applier) apply(hdr *tar.Header, r io.Reader) error {
	name := path.Clean("/" + hdr.Name)[1:]
	if name == "" {
		return nil
	}
	dir, base := path.Split(name)
	dir = path.Clean("/" + dir)[1:]
	if dir == "" {
		dir = "."
	}
	switch {
	case base == whiteoutOpaque:
		return a.opaque(dir)
	case strings.HasPrefix(base, whiteoutPrefix):
		return a.whiteout(path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix)))
	}
	err := a.root.MkdirAll(dir, 0o755)
	if err == nil {
		err = a.create(name, dir, base, hdr, r)
	}
	if err != nil {
		return entryError(name, err)
	}
	a.created[name] = true
	return nil
}

func (a *applier) whiteout(name string) error {
	if err := a.root.RemoveAll(name); err != nil {
		return fmt.Errorf("whiteout %s: %w", name, err)
	}
	return nil
}

func (a *applier) opaque(dir string) error {
	entries, err := fs.ReadDir(a.root.FS(), dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opaque whiteout %s: %w", dir, err)
	}
	for _, e := range entries {
		child := path.Join(dir, e.Name())
		if a.created[child] {
			continue
		}
		if err := a.root.RemoveAll(child); err != nil {
			return fmt.Errorf("opaque whiteout %s: %w", dir, err)
		}
	}
	return nil
}

// create makes the entry name (in directory dir, base name base), replacing
// what lower layers had there unless both are directories.
func (a *applier) create(name, dir, base string, hdr *tar.Header, r io.Reader) error {
	old, err := a.root.Lstat(name)
	switch {
	case err == nil && old.IsDir() && hdr.Typeflag == tar.TypeDir:
	case err == nil:
		// Never write through what was there: a hard link from a lower
		// layer shares its inode with another path.
		if err := a.root.RemoveAll(name); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := a.root.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	case tar.TypeReg:
		if err := a.writeFile(name, hdr, r); err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := a.root.Symlink(hdr.Linkname, name); err != nil {
			return err
		}
		return a.root.Lchown(name, hdr.Uid, hdr.Gid)
	case tar.TypeLink:
		// A hard link shares the inode of its target: its owner and mode
		// are the target's.
		return a.root.Link(path.Clean("/" + hdr.Linkname)[1:], name)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		if err := a.mknod(dir, base, hdr); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: entry type %q is not supported", errCorrupt, hdr.Typeflag)
	}
	return a.setAttrs(name, hdr)
}

func (a *applier) writeFile(name string, hdr *tar.Header, r io.Reader) error {
	f, err := a.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err != nil {
		f.Close()
		return readError(err)
	}
	for key, value := range hdr.PAXRecords {
		attr, ok := strings.CutPrefix(key, "SCHILY.xattr.")
		if !ok {
			continue
		}
		if err := unix.Fsetxattr(int(f.Fd()), attr, []byte(value), 0); err != nil {
			f.Close()
			return fmt.Errorf("xattr %s: %w", attr, err)
		}
	}
	return f.Close()
}

// mknod makes a device node or FIFO: os.Root has no Mknod, so it is made
// relative to the parent directory opened inside the root.
func (a *applier) mknod(dir, base string, hdr *tar.Header) error {
	d, err := a.root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	mode := uint32(hdr.Mode & 0o7777)
	switch hdr.Typeflag {
	case tar.TypeChar:
		mode |= unix.S_IFCHR
	case tar.TypeBlock:
		mode |= unix.S_IFBLK
	default:
		mode |= unix.S_IFIFO
	}
	dev := unix.Mkdev(uint32(hdr.Devmajor), uint32(hdr.Devminor))
	return unix.Mknodat(int(d.Fd()), base, mode, int(dev))
}

// setAttrs gives a directory, file or node the layer's owner, mode and
// modification time (chown first: it clears set-ID bits).
func (a *applier) setAttrs(name string, hdr *tar.Header) error {
	if err := a.root.Lchown(name, hdr.Uid, hdr.Gid); err != nil {
		return err
	}
	if err := a.root.Chmod(name, hdr.FileInfo().Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	return a.root.Chtimes(name, hdr.ModTime, hdr.ModTime)
}
