package exposure

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Secret says whether a file of the local cluster's state directory, by
// its path relative to that directory, holds a secret: everything in the
// pki directory, kubeconfigs, keys (*.key) and token files (tokens.csv).
func Secret(rel string) bool {
	rel = filepath.ToSlash(rel)
	base := path.Base(rel)
	return strings.HasPrefix(rel, "pki/") || base == "kubeconfig" || strings.HasSuffix(base, ".key") || base == "tokens.csv"
}

// LooseFiles walks dir and returns, as "path mode", every regular file for
// which secret (given its path relative to dir) holds whose permissions are
// not 0600, and every directory holding one, dir included, whose
// permissions are not 0700. It also returns how many secret files it saw,
// so that a caller can tell a clean directory from an empty one. It does
// not enter other file systems mounted under dir (a pod's root file
// system may be the host's).
func LooseFiles(dir string, secret func(rel string) bool) (loose []string, secrets int, err error) {
	rootDev, err := device(dir)
	if err != nil {
		return nil, 0, err
	}
	checked := map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			if dev, err := device(p); err != nil || dev != rootDev {
				return fs.SkipDir
			}
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || !secret(rel) {
			return err
		}
		secrets++
		for parent := filepath.Dir(p); !checked[parent]; parent = filepath.Dir(parent) {
			checked[parent] = true
			loose = appendIfNot(loose, parent, 0o700)
			if parent == dir {
				break
			}
		}
		loose = appendIfNot(loose, p, 0o600)
		return nil
	})
	return loose, secrets, err
}

// device is the ID of the file system that holds p.
func device(p string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return 0, err
	}
	return uint64(st.Dev), nil //nolint:unconvert // Dev is not uint64 on every platform
}

// appendIfNot appends "path mode" to list unless p's permissions are want.
func appendIfNot(list []string, p string, want fs.FileMode) []string {
	info, err := os.Lstat(p)
	switch {
	case err != nil:
		return append(list, fmt.Sprintf("%s (%v)", p, err))
	case info.Mode().Perm() != want:
		return append(list, fmt.Sprintf("%s %v", p, info.Mode().Perm()))
	}
	return list
}
