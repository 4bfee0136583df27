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

// Location is where a volume the policy mounts lies on the host: Rel below
// Dir. Dir is a directory the node trusts (a shared directory or the
// volume directory, symlinks resolved when the node started); Rel is a
// local path ("." for Dir itself) that had no symlink when the policy
// looked. Opening Rel beneath Dir without following any symlink therefore
// opens what the policy allowed, or fails: a symlink found there later was
// put there after the check.
type Location struct {
	// Dir is the trusted directory, absolute.
	Dir string
	// Rel is the path below Dir, without symlinks, "." or "..".
	Rel string
}

// Path is the location as one absolute path.
func (l Location) Path() string { return filepath.Join(l.Dir, l.Rel) }

// HostPath returns where hostPath volume name of path lies, with its
// symlinks followed, when that is under a directory the node shares;
// otherwise it returns why the node refuses it.
func (p Policy) HostPath(name, path string) (loc Location, refusal string) {
	if !filepath.IsAbs(path) {
		return Location{}, fmt.Sprintf("hostPath volume %q: path %q is not absolute", name, path)
	}
	resolved, err := resolve(path)
	if err != nil {
		return Location{}, fmt.Sprintf("hostPath volume %q (%s): %v", name, path, err)
	}
	if loc, ok := p.shares(resolved); ok {
		return loc, ""
	}
	where := path
	if resolved != path {
		where = fmt.Sprintf("%s, resolved %s", path, resolved)
	}
	shared := "none"
	if len(p.sharedDirs) > 0 {
		shared = strings.Join(p.sharedDirs, ",")
	}
	return Location{}, fmt.Sprintf("hostPath volume %q (%s) is not under a directory the node shares (--%s: %s)", name, where, FlagSharedHostDirs, shared)
}

// shares returns the location of the resolved path in the first shared
// directory that holds it.
func (p Policy) shares(resolved string) (Location, bool) {
	for _, d := range p.sharedDirs {
		if rel, ok := below(d, resolved); ok {
			return Location{Dir: d, Rel: rel}, true
		}
	}
	return Location{}, false
}

// below returns the resolved path relative to dir when it is dir or lies
// below it.
func below(dir, resolved string) (string, bool) {
	rel, err := filepath.Rel(dir, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
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
