package podinputs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

// A pod that shares a directory with the node (a hostPath, a persistent
// volume, an emptyDir of another container) may rename and replace what is
// in it at any time. So the node never names a path inside such a
// directory twice: it opens the path once, relative to a directory it
// already holds open, with openat2 refusing symlinks or ".." that lead
// above that directory, and works on the descriptor it got (fstat,
// mkdirat, fchownat, and a bind mount of /proc/self/fd/N; see mountFD).

const (
	// exactly opens the path as written: no symlink, no "..", nothing
	// above the starting directory.
	exactly = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS
	// inVolume follows the symlinks and ".." that stay below the starting
	// directory, and refuses those that leave it (EXDEV), as a kubelet
	// refuses a subPath that leaves its volume.
	inVolume = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS
)

// openRetries bounds the retries of an open that a concurrent rename made
// fail with EAGAIN (the kernel's answer when it cannot be sure that the
// path stayed below the starting directory).
const openRetries = 32

// openat2 opens path below dirfd (close-on-exec), retrying on EAGAIN and
// EINTR.
func openat2(dirfd int, path string, flags uint64, resolve uint64) (int, error) {
	how := &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolve}
	for range openRetries {
		fd, err := unix.Openat2(dirfd, path, how)
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// openDir opens a directory the node trusts (its own, or a shared one
// resolved when the node started) as an O_PATH descriptor.
func openDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, nil
}

// openLocation opens what the host-access policy allowed: loc's Rel below
// its Dir, following no symlink. flags are added to O_PATH (O_DIRECTORY).
func openLocation(loc hostaccess.Location, flags uint64) (int, error) {
	root, err := openDir(loc.Dir)
	if err != nil {
		return -1, err
	}
	defer unix.Close(root)
	fd, err := openat2(root, loc.Rel, unix.O_PATH|flags, exactly)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: loc.Path(), Err: err}
	}
	return fd, nil
}

// mkdirsBeneath creates the missing directories of rel below root, each
// opened with resolve before the next is made in it, so that none is made
// through a symlink resolve refuses. What exists is left as it is, of
// whatever type. A directory made belongs to the owner
// of the directory it is made in when likeParent, to root otherwise.
func mkdirsBeneath(root int, rel string, resolve uint64, likeParent bool) error {
	parts := strings.Split(filepath.Clean(rel), "/")
	if rel == "." {
		return nil
	}
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		fd, err := openat2(root, prefix, unix.O_PATH, resolve)
		if err == nil {
			unix.Close(fd)
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return &fs.PathError{Op: "open", Path: prefix, Err: err}
		}
		if err := mkdirIn(root, strings.Join(parts[:i], "/"), parts[i], resolve, likeParent); err != nil {
			return &fs.PathError{Op: "mkdir", Path: prefix, Err: err}
		}
	}
	return nil
}

// mkdirIn makes directory name in the directory parent (below root, opened
// with resolve). A name that appeared meanwhile is left to the caller's
// next open.
func mkdirIn(root int, parent, name string, resolve uint64, likeParent bool) error {
	if parent == "" {
		parent = "."
	}
	dir, err := openat2(root, parent, unix.O_PATH|unix.O_DIRECTORY, resolve)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Mkdirat(dir, name, 0o755); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return nil
		}
		return err
	}
	if !likeParent {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return err
	}
	// Should the pod have swapped the new directory already, this changes
	// the owner of its symlink, nothing it points to.
	return unix.Fchownat(dir, name, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
}
