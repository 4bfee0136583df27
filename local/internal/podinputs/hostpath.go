package podinputs

import (
	"errors"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

// hostPathVolume sets up a hostPath volume: where the node's host-access
// policy allows it (below a shared directory, symlinks followed), it
// creates what the volume's type asks for, opens the path once and mounts
// what it opened at target (see mountFD), which the containers mount. A
// pod sharing the directory that swaps a part of the path for a symlink
// after the check gets the volume refused, not the symlink's target.
func (v *PodVolumes) hostPathVolume(name string, src *corev1.HostPathVolumeSource, policy hostaccess.Policy, target string) error {
	loc, refusal := policy.HostPath(name, src.Path)
	if refusal != "" {
		return configErrorf("%s", refusal)
	}
	fd, err := openHostPath(loc, src)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := v.bind(fd, target); err != nil {
		return err
	}
	v.Paths[name] = target
	return nil
}

// openHostPath opens the hostPath volume src, found at loc, as an O_PATH
// descriptor, after creating it as its type says without following any
// symlink: DirectoryOrCreate with its missing parents, FileOrCreate in an
// existing directory, and no type as a directory, as containerd and CRI-O
// create a missing bind source. The other types require what is there to
// be of that type. Errors name the path as the pod wrote it.
func openHostPath(loc hostaccess.Location, src *corev1.HostPathVolumeSource) (int, error) {
	t := ptr.Deref(src.Type, corev1.HostPathUnset)
	if err := createHostPath(loc, t); err != nil {
		return -1, err
	}
	fd, err := openLocation(loc, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return -1, configErrorf("hostPath type check failed: %s does not exist", src.Path)
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return -1, configErrorf("hostPath %s: a symlink was put in its path after the node checked it", src.Path)
	case err != nil:
		return -1, err
	}
	if t == corev1.HostPathUnset {
		return fd, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := checkHostPathType(src.Path, t, fileType(st.Mode)); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// createHostPath creates what a hostPath volume of type t at loc needs and
// is missing.
func createHostPath(loc hostaccess.Location, t corev1.HostPathType) error {
	if t != corev1.HostPathUnset && t != corev1.HostPathDirectoryOrCreate && t != corev1.HostPathFileOrCreate {
		return nil
	}
	root, err := openDir(loc.Dir)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	if t != corev1.HostPathFileOrCreate {
		return mkdirsBeneath(root, loc.Rel, exactly, false)
	}
	parent, err := openat2(root, filepath.Dir(loc.Rel), unix.O_PATH|unix.O_DIRECTORY, exactly)
	if err != nil {
		return &fs.PathError{Op: "open", Path: filepath.Dir(loc.Path()), Err: err}
	}
	defer unix.Close(parent)
	// O_EXCL never follows a symlink, not even a dangling one.
	fd, err := unix.Openat(parent, filepath.Base(loc.Rel), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "create", Path: loc.Path(), Err: err}
	}
	return unix.Close(fd)
}

// fileType is the type bits of a stat mode as an fs.FileMode.
func fileType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	}
	return 0
}

func checkHostPathType(p string, t corev1.HostPathType, mode fs.FileMode) error {
	var ok bool
	var what string
	switch t {
	case corev1.HostPathDirectory, corev1.HostPathDirectoryOrCreate:
		ok, what = mode.IsDir(), "a directory"
	case corev1.HostPathFile, corev1.HostPathFileOrCreate:
		ok, what = mode.IsRegular(), "a file"
	case corev1.HostPathSocket:
		ok, what = mode&fs.ModeSocket != 0, "a socket file"
	case corev1.HostPathCharDev:
		ok, what = mode&fs.ModeCharDevice != 0, "a character device"
	case corev1.HostPathBlockDev:
		ok, what = mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0, "a block device"
	default:
		return configErrorf("hostPath type %q is not known", t)
	}
	if !ok {
		return configErrorf("hostPath type check failed: %s is not %s", p, what)
	}
	return nil
}
