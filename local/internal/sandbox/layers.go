package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Every container gets its own writable layer over each part of the root
// it is given, as a container runtime gives one over an image: an overlay
// of the pod's base root at its root (layer "0"), and one of each host
// system directory (/usr, /etc/ssl/certs, ...) at the same place (layers
// "1", "2", ...). The upper and work directories are the container's,
// under <container dir>/layers, removed with it: nothing the container
// writes reaches the host's files, and a restarted container starts from a
// fresh layer. The system directories keep the host's owners (an
// unprivileged user in the pod's user namespace), so the container's root
// still cannot change them; what the layers give it is mount points
// anywhere: those below a system directory are made in its layer before
// it is mounted (runc could not make them as the container's user).

// layersSubdir holds a container's layers, each <n>/upper and <n>/work.
const layersSubdir = "layers"

// layer is one overlay of a container: lower shown at target with the
// container's own upper directory.
type layer struct {
	lower, target, upper, work string
}

// containerLayers lists the container's layers: its root at rootfs, then
// the sandbox's system directories below it.
func (c *Container) containerLayers(rootfs string) []layer {
	dir := filepath.Join(c.dir, layersSubdir)
	at := func(n int) (string, string) {
		return filepath.Join(dir, strconv.Itoa(n), "upper"), filepath.Join(dir, strconv.Itoa(n), "work")
	}
	upper, work := at(0)
	layers := []layer{{lower: filepath.Join(c.sandbox.dir, baseSubdir), target: rootfs, upper: upper, work: work}}
	for i, d := range c.sandbox.systemDirs {
		upper, work := at(i + 1)
		layers = append(layers, layer{lower: d, target: filepath.Join(rootfs, d), upper: upper, work: work})
	}
	return layers
}

// mountLayers makes the layers' upper and work directories, the mount
// points of spec's mounts below each system directory, and mounts the
// layers in order; with ReadOnlyRoot the system directories' layers are
// mounted read-only once their mount points exist (runc makes the root
// read-only after its own mounts).
func (c *Container) mountLayers(rootfs string, spec ContainerSpec) error {
	if spec.ImageRoot != "" {
		return c.mountImageLayer(rootfs, spec.ImageRoot)
	}
	ids := c.sandbox.ids
	for i, l := range c.containerLayers(rootfs) {
		for _, d := range []string{l.upper, l.work} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if i == 0 {
			// The merged root takes the upper directory's owner: the pod's
			// root.
			if err := ids.chownToRoot(l.upper); err != nil {
				return err
			}
			if err := mountOverlay(l.target, l.lower, l.upper, l.work, 0); err != nil {
				return err
			}
			continue
		}
		if err := mirrorDir(l.lower, l.upper); err != nil {
			return err
		}
		for _, m := range spec.Mounts {
			if err := makeMountPoint(l, m, ids); err != nil {
				return fmt.Errorf("mount point %s: %w", m.Destination, err)
			}
		}
		// The base root has no place for the /etc directories.
		if err := os.MkdirAll(l.target, 0o755); err != nil {
			return err
		}
		flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV)
		if spec.ReadOnlyRoot {
			flags |= unix.MS_RDONLY
		}
		if err := mountOverlay(l.target, l.lower, l.upper, l.work, flags); err != nil {
			return err
		}
	}
	return nil
}

// makeMountPoint makes m's destination in layer l's upper directory when
// it lies below l's system directory and is missing there: the missing
// directories (the pod's root's, 0755) and, for a file source, an empty
// file. Directories of the system directory on the way get a copy in the
// layer with their owner and mode, so that the merged view shows them as
// before. A symlink or file on the way ends the walk: runc resolves it
// within the container's root, as for any mount.
func makeMountPoint(l layer, m Mount, ids idMap) error {
	rel, ok := strings.CutPrefix(path.Clean(m.Destination), l.lower+"/")
	if !ok {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := filepath.Join(parts[:i+1]...)
		last := i == len(parts)-1
		info, err := os.Lstat(filepath.Join(l.lower, sub))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return createMissing(l.upper, parts, i, m.Source, ids)
		case err != nil:
			return err
		case last || !info.IsDir():
			return nil
		}
		if err := mirrorDir(filepath.Join(l.lower, sub), filepath.Join(l.upper, sub)); err != nil {
			return err
		}
	}
	return nil
}

// createMissing creates parts[from:] below upper, the last one as a file
// when source is a file, each owned by the pod's root.
func createMissing(upper string, parts []string, from int, source string, ids idMap) error {
	info, err := os.Stat(source)
	if err != nil {
		return fmt.Errorf("mount source: %w", err)
	}
	for i := from; i < len(parts); i++ {
		p := filepath.Join(upper, filepath.Join(parts[:i+1]...))
		if i == len(parts)-1 && !info.IsDir() {
			err = createEmptyFile(p)
		} else if err = os.Mkdir(p, 0o755); errors.Is(err, fs.ErrExist) {
			err = nil
		}
		if err != nil {
			return err
		}
		if err := ids.chownToRoot(p); err != nil {
			return err
		}
	}
	return nil
}

func createEmptyFile(p string) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// mirrorDir makes dst (in a fresh upper directory) a directory with src's
// mode and owner, so that the overlay shows src as it is.
func mirrorDir(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no owner", src)
	}
	if err := os.Mkdir(dst, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	return os.Chmod(dst, info.Mode()&(fs.ModePerm|fs.ModeSticky|fs.ModeSetgid|fs.ModeSetuid))
}

// imageSubdir is where, in a container's run directory, its image's root
// is shown with the pod's ids (an idmapped mount).
const imageSubdir = "image"

// mountImageLayer mounts the container's root for an image from a
// registry: an overlay whose lower layer is the image's unpacked root and
// whose upper layer is the container's own (layer "0"), and nothing of the
// host. In a user namespace the lower layer is an idmapped mount of the
// image's root onto the pod's ids (mount_setattr MOUNT_ATTR_IDMAP, which
// overlayfs takes as a lower layer since Linux 5.19): files keep the owners
// the image gives them as the container sees them, with no per-pod copy;
// the mount is read-only and nodev, so the store's copy cannot change.
func (c *Container) mountImageLayer(rootfs, imageRoot string) error {
	dir := filepath.Join(c.dir, layersSubdir, "0")
	upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	ids := c.sandbox.ids
	lower := imageRoot
	if ids.mapped {
		lower = filepath.Join(c.runDir, imageSubdir)
		if err := idmappedMount(imageRoot, lower, c.sandbox.usernsPath()); err != nil {
			return err
		}
	}
	// The upper directory takes the image root's owner and mode as the
	// container sees them: the merged root's are the upper's.
	if err := mirrorDir(lower, upper); err != nil {
		return err
	}
	return mountOverlay(rootfs, lower, upper, work, 0)
}

// idmappedMount shows source at target (made here) read-only and nodev,
// with its ids mapped by the user namespace at usernsPath: id n of source
// appears as the host id the namespace maps n to.
func idmappedMount(source, target, usernsPath string) error {
	if err := os.Mkdir(target, 0o700); err != nil {
		return err
	}
	userns, err := os.Open(usernsPath)
	if err != nil {
		return err
	}
	defer userns.Close()
	fd, err := unix.OpenTree(unix.AT_FDCWD, source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", source, err)
	}
	tree := os.NewFile(uintptr(fd), source)
	defer tree.Close()
	attr := unix.MountAttr{
		Attr_set:  unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV,
		Userns_fd: uint64(userns.Fd()),
	}
	if err := unix.MountSetattr(int(tree.Fd()), "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("idmap %s: %w", source, err)
	}
	if err := unix.MoveMount(int(tree.Fd()), "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount %s to %s: %w", source, target, err)
	}
	return nil
}
