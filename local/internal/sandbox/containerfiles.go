package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// WritableDir is the host directory of the container's writable layers
// (the upper directories of its overlays, see mountLayers): what it writes
// outside its volumes and its /tmp.
func (c *Container) WritableDir() string { return filepath.Join(c.dir, layersSubdir) }

// reopenLogEvent is conmon's control message type that has it reopen the
// container's log file.
const reopenLogEvent = 2

// reopenLogWait bounds how long ReopenLog waits for conmon to make the new
// file.
const reopenLogWait = 5 * time.Second

// ReopenLog has the container's monitor reopen its log file (a new file at
// the log path, once the current one was renamed by a rotation), and waits
// until the new file exists, as a CRI runtime's ReopenContainerLog does.
func (c *Container) ReopenLog(logPath string) error {
	f, err := os.OpenFile(filepath.Join(c.dir, "ctl"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("container %s: %w", c.id, err)
	}
	_, err = fmt.Fprintf(f, "%d %d %d\n", reopenLogEvent, 0, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("container %s: %w", c.id, err)
	}
	deadline := time.Now().Add(reopenLogWait)
	for {
		_, err := os.Stat(logPath)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			return err
		}
		select {
		case <-c.exited:
			return fmt.Errorf("container %s ended before reopening its log", c.id)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container %s: its monitor did not reopen the log within %s", c.id, reopenLogWait)
		}
	}
}
