package podinputs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The layout of an atomically written volume directory, as a kubelet's:
//
//	..2026_11_23_17_57_46.1234567/   the current contents (timestamped)
//	..data -> ..2026_11_23_17_57_46.1234567
//	key    -> ..data/key             one symlink per top-level name
//
// An update writes a new timestamped directory and renames a new symlink
// over ..data, so that a reader that opens ..data/key (or key) sees either
// the old contents or the new ones, never a mix.
const (
	dataLink    = "..data"
	dataLinkTmp = "..data_tmp"
	tsLayout    = "..2006_01_02_15_04_05."
)

// file is one file of a volume's contents.
type file struct {
	data []byte
	mode os.FileMode
}

// payload maps a relative path to its file.
type payload map[string]file

// writeAtomic makes dir show exactly files, atomically. It reports whether it
// changed anything: unchanged contents are not written again.
func writeAtomic(dir string, files payload, now time.Time) (bool, error) {
	if err := checkPaths(files); err != nil {
		return false, err
	}
	old, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if old != "" && sameContents(filepath.Join(dir, old), files) {
		return false, nil
	}
	ts, err := writeTimestamped(dir, files, now)
	if err != nil {
		return false, err
	}
	if err := swapDataLink(dir, ts); err != nil {
		return false, err
	}
	if err := linkTopLevel(dir, files); err != nil {
		return true, err
	}
	if old != "" {
		return true, os.RemoveAll(filepath.Join(dir, old))
	}
	return true, nil
}

// checkPaths rejects paths that would leave the directory or collide with
// the writer's own names.
func checkPaths(files payload) error {
	for p := range files {
		if !filepath.IsLocal(p) || strings.HasPrefix(p, "..") || filepath.Clean(p) != p {
			return fmt.Errorf("invalid path %q: must be relative, clean and must not start with '..'", p)
		}
	}
	return nil
}

func writeTimestamped(dir string, files payload, now time.Time) (string, error) {
	ts, err := os.MkdirTemp(dir, now.UTC().Format(tsLayout))
	if err != nil {
		return "", err
	}
	if err := os.Chmod(ts, 0o755); err != nil {
		return "", err
	}
	for p, f := range files {
		full := filepath.Join(ts, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, f.data, f.mode); err != nil {
			return "", err
		}
		// WriteFile's mode is filtered by the umask; the volume's is not.
		if err := os.Chmod(full, f.mode); err != nil {
			return "", err
		}
	}
	return filepath.Base(ts), nil
}

func swapDataLink(dir, ts string) error {
	tmp := filepath.Join(dir, dataLinkTmp)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Symlink(ts, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, dataLink))
}

// linkTopLevel points a symlink at ..data/<name> for each top-level name of
// files and removes the symlinks of names that are gone.
func linkTopLevel(dir string, files payload) error {
	want := map[string]bool{}
	for p := range files {
		want[strings.SplitN(p, string(filepath.Separator), 2)[0]] = true
	}
	for name := range want {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(dataLink, name), link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") || want[name] || e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if target, _ := os.Readlink(filepath.Join(dir, name)); strings.HasPrefix(target, dataLink+string(filepath.Separator)) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameContents reports whether dir holds exactly files, with their modes.
func sameContents(dir string, files payload) bool {
	count := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f, ok := files[rel]
		info, ierr := d.Info()
		if !ok || ierr != nil || info.Mode() != f.mode {
			return fs.ErrExist
		}
		data, rerr := os.ReadFile(p)
		if rerr != nil || !bytes.Equal(data, f.data) {
			return fs.ErrExist
		}
		count++
		return nil
	})
	return err == nil && count == len(files)
}
