package containerlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of Rotation and of how often a node checks its containers' logs:
// the kubelet's containerLogMaxSize, containerLogMaxFiles and
// containerLogMonitorInterval.
const (
	DefaultMaxSize         = 10 << 20
	DefaultMaxFiles        = 5
	DefaultMonitorInterval = 10 * time.Second
)

// rotatedSuffix is the time format of a rotated file's suffix, as a
// kubelet names them (<log>.20261123-100000).
const rotatedSuffix = "20060102-150405"

// Rotation bounds a container's log as the kubelet's container log manager
// does: once the file has reached MaxSize it is renamed with the time as a
// suffix and the writer reopens a new one; the current file and the
// rotated ones are at most MaxFiles, the oldest removed first. Rotated
// files are kept uncompressed (a kubelet gzips all but the newest). Between
// two checks a file may grow past MaxSize, as with a kubelet.
type Rotation struct {
	// MaxSize is the size at which the file is rotated.
	MaxSize int64
	// MaxFiles counts the current file and the rotated ones; at least 2.
	MaxFiles int
}

// Validate refuses a rotation that cannot bound the logs.
func (r Rotation) Validate() error {
	if r.MaxSize <= 0 {
		return fmt.Errorf("container log max size %d: must be positive", r.MaxSize)
	}
	if r.MaxFiles < 2 {
		return fmt.Errorf("container log max files %d: must be at least 2", r.MaxFiles)
	}
	return nil
}

// Rotate rotates the log at path if it has reached MaxSize: it removes the
// oldest rotated files so that, with the one it makes, MaxFiles-1 remain,
// renames the file to <path>.<now> and calls reopen, which has the writer
// start a new file at path. If reopen fails the file is renamed back, so
// that the writer's output stays where readers look. It reports whether it
// rotated.
func (r Rotation) Rotate(path string, now time.Time, reopen func() error) (bool, error) {
	st, err := os.Stat(path)
	if err != nil || st.Size() < r.MaxSize {
		return false, ignoreNotExist(err)
	}
	rotated := path + "." + now.UTC().Format(rotatedSuffix)
	if _, err := os.Lstat(rotated); err == nil {
		return false, nil // rotated already this second: the next check does it
	}
	if err := removeOldest(path, r.MaxFiles-2); err != nil {
		return false, err
	}
	if err := os.Rename(path, rotated); err != nil {
		return false, err
	}
	if err := reopen(); err != nil {
		return false, errors.Join(fmt.Errorf("reopening the log: %w", err), os.Rename(rotated, path))
	}
	return true, nil
}

// rotatedFiles lists the rotated files of path, oldest first.
func rotatedFiles(path string) ([]string, error) {
	matches, err := filepath.Glob(path + ".*")
	if err != nil {
		return nil, err
	}
	slices.Sort(matches) // the suffix is a sortable time
	return matches, nil
}

// removeOldest removes the oldest rotated files of path so that keep remain.
func removeOldest(path string, keep int) error {
	files, err := rotatedFiles(path)
	if err != nil {
		return err
	}
	var errs []error
	for len(files) > max(keep, 0) {
		errs = append(errs, ignoreNotExist(os.Remove(files[0])))
		files = files[1:]
	}
	return errors.Join(errs...)
}

// pruneAttempts removes the logs, rotated ones included, of the attempts
// in dir older than keepFrom: a kubelet keeps the log of the previous
// attempt of a container (kubectl logs --previous), not those before.
func pruneAttempts(dir string, keepFrom int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), ".")
		if attempt, err := strconv.Atoi(num); err == nil && attempt < keepFrom {
			errs = append(errs, ignoreNotExist(os.Remove(filepath.Join(dir, e.Name()))))
		}
	}
	return errors.Join(errs...)
}

func ignoreNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
