package podinputs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// mountFD bind-mounts (recursively) what fd is open on at target, a path
// in a directory of the node's that no pod can write to, so that whoever
// mounts target later (runc) gets exactly that file or directory, whatever
// was renamed since. target is created like it (a directory, or an empty
// file for anything else); an earlier mount there (of an adopted pod) is
// replaced.
func mountFD(fd int, target string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if err := unmountBind(target); err != nil {
		return err
	}
	if err := makeTarget(target, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return err
	}
	source := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount(source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind mount at %s: %w", target, err)
	}
	return nil
}

// makeTarget makes target a directory or an empty file, replacing one of
// the other kind.
func makeTarget(target string, dir bool) error {
	info, err := os.Lstat(target)
	switch {
	case err == nil && info.IsDir() == dir:
		return nil
	case err == nil:
		if err := os.Remove(target); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if dir {
		return os.Mkdir(target, 0o711)
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// unmountBind unmounts every mount stacked at target; a target that does
// not exist or is no mount point is done.
func unmountBind(target string) error {
	for range 8 {
		mounted, err := mountinfo.Mounted(target)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && !mounted) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := unix.Unmount(target, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("unmount %s: %w", target, err)
		}
	}
	return fmt.Errorf("mounts at %s keep coming back", target)
}

// bind mounts what fd is open on at target (see mountFD) and remembers it
// for Release.
func (v *PodVolumes) bind(fd int, target string) error {
	v.bindsMu.Lock()
	defer v.bindsMu.Unlock()
	if err := mountFD(fd, target); err != nil {
		return err
	}
	if !slices.Contains(v.binds, target) {
		v.binds = append(v.binds, target)
	}
	return nil
}

// releaseBinds unmounts what bind mounted, and the subPath mounts an
// earlier run of the node left for an adopted pod.
func (v *PodVolumes) releaseBinds() error {
	v.bindsMu.Lock()
	defer v.bindsMu.Unlock()
	var errs []error
	kept := v.binds[:0]
	for _, target := range v.binds {
		if err := unmountBind(target); err != nil {
			errs = append(errs, err)
			kept = append(kept, target)
		}
	}
	v.binds = kept
	if v.dir == "" {
		return errors.Join(errs...)
	}
	left, err := mountinfo.GetMounts(mountinfo.PrefixFilter(filepath.Join(v.dir, subPathsDir)))
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, m := range left {
		errs = append(errs, unmountBind(m.Mountpoint))
	}
	return errors.Join(errs...)
}
