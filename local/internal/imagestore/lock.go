package imagestore

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockFile is the store's cross-process lock: the node's garbage
// collection and an archive load from another process (ray-local load)
// hold it, so that neither removes or half-sees what the other commits.
const lockFile = "lock"

// lockAcross takes the store's lock, waiting for another process that
// holds it, and returns its release.
func (s *Store) lockAcross() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil { //nolint:gosec // a descriptor fits int
		f.Close()
		return nil, fmt.Errorf("image store: locking %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil // closing releases the flock
}
