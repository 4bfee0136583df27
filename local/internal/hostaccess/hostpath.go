package hostaccess

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinks bounds the symlinks followed in one path, as the kernel's
// limit of 40 does.
const maxSymlinks = 40

// checkHostPath returns why the node refuses hostPath volume name of path,
// or "" when path, resolved, lies under a shared directory.
func (p Policy) checkHostPath(name, path string) string {
	if !filepath.IsAbs(path) {
		return fmt.Sprintf("hostPath volume %q: path %q is not absolute", name, path)
	}
	resolved, err := resolve(path)
	if err != nil {
		return fmt.Sprintf("hostPath volume %q (%s): %v", name, path, err)
	}
	if p.shares(resolved) {
		return ""
	}
	where := path
	if resolved != path {
		where = fmt.Sprintf("%s, resolved %s", path, resolved)
	}
	shared := "none"
	if len(p.sharedDirs) > 0 {
		shared = strings.Join(p.sharedDirs, ",")
	}
	return fmt.Sprintf("hostPath volume %q (%s) is not under a directory the node shares (--%s: %s)", name, where, FlagSharedHostDirs, shared)
}

// shares tells whether the resolved path lies in a shared directory.
func (p Policy) shares(resolved string) bool {
	for _, d := range p.sharedDirs {
		if under(d, resolved) {
			return true
		}
	}
	return false
}

// under tells whether the resolved path is dir or lies below it.
func under(dir, resolved string) bool {
	rel, err := filepath.Rel(dir, resolved)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// resolve returns the absolute path p with every symlink of its existing
// part followed and "." and ".." applied, in the order the kernel applies
// them when the volume is mounted: ".." after a symlink leaves the link's
// target, not the link's directory, so p is not cleaned lexically first.
// The part that does not exist yet (a DirectoryOrCreate volume) is cleaned
// lexically: it will be created as plain directories. A dangling symlink is
// followed too, since creating the volume would create its target.
func resolve(p string) (string, error) {
	done := "/"
	todo := splitPath(p)
	links := 0
	for len(todo) > 0 {
		elem := todo[0]
		todo = todo[1:]
		if elem == ".." {
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, elem)
		info, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, todo...)...), nil
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", fmt.Errorf("more than %d symlinks in %s", maxSymlinks, p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			done = "/"
		}
		todo = append(splitPath(target), todo...)
	}
	return done, nil
}

// splitPath splits p into its names, without empty ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, elem := range strings.Split(p, "/") {
		if elem != "" && elem != "." {
			out = append(out, elem)
		}
	}
	return out
}
