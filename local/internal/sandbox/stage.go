package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// runRoot holds, per host, the mount points runc uses: a container's root
// and a bind of each of its mount sources. runc sets up a container's mounts
// from inside its user namespace, as the container's root, which may not
// pass through directories such as /root (0700) where the state directory or
// a virtualenv may live; under runRoot every directory may be passed
// through (0711), and only the bind mounts in it lead elsewhere.
const runRoot = "/run/ray-local"

// runDir is the host's directory under runRoot.
func (n names) runDir() string { return filepath.Join(runRoot, n.tag) }

// makeRunDir creates runRoot and dir, 0711.
func makeRunDir(dir string) error {
	for _, d := range []string{runRoot, dir} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return err
		}
		if err := os.Chmod(d, 0o711); err != nil {
			return err
		}
	}
	return nil
}

// removeRunDir unmounts everything below dir and removes it.
func removeRunDir(dir string) error {
	if err := unmountAll(dir); err != nil {
		return err
	}
	return removeUnmounted(dir)
}

// stageBinds bind-mounts the source of every bind mount that an
// unprivileged user could not reach (see reachable) at dir/<index>, and
// returns mounts with those sources, so that runc reaches each one. dir is
// created 0711.
func stageBinds(dir string, mounts []specs.Mount) ([]specs.Mount, error) {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return nil, err
	}
	out := make([]specs.Mount, len(mounts))
	for i, m := range mounts {
		out[i] = m
		if m.Type != "bind" || reachable(m.Source) {
			continue
		}
		staged := filepath.Join(dir, strconv.Itoa(i))
		if err := bindAt(m.Source, staged); err != nil {
			return nil, err
		}
		out[i].Source = staged
	}
	return out, nil
}

// bindAt bind-mounts source (recursively) at target, which it creates as a
// file or directory like source.
func bindAt(source, target string) error {
	info, err := os.Stat(source)
	if err != nil {
		return fmt.Errorf("mount source: %w", err)
	}
	if info.IsDir() {
		err = os.Mkdir(target, 0o711)
	} else {
		var f *os.File
		if f, err = os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
			err = f.Close()
		}
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s at %s: %w", source, target, err)
	}
	return nil
}

// reachable reports whether every directory above path lets others pass
// (o+x), so that a user namespace's root can name path.
func reachable(path string) bool {
	for dir := filepath.Dir(filepath.Clean(path)); ; dir = filepath.Dir(dir) {
		info, err := os.Stat(dir)
		if err != nil || info.Mode().Perm()&0o001 == 0 {
			return false
		}
		if dir == "/" {
			return true
		}
	}
}
