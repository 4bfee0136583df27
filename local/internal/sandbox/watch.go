package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// fileWatcher waits for one file to appear.
type fileWatcher struct {
	path string
	w    *fsnotify.Watcher
}

// watchFor starts watching the directory of path; create it before the
// process that will write path starts, so that no event is missed.
func watchFor(path string) (*fileWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(filepath.Dir(path)); err != nil {
		_ = w.Close()
		return nil, err
	}
	return &fileWatcher{path: path, w: w}, nil
}

// wait returns nil once the file exists, or an error when ctx ends or gone
// closes (the writer ended without writing it).
func (f *fileWatcher) wait(ctx context.Context, gone <-chan struct{}) error {
	for {
		if _, err := os.Stat(f.path); err == nil {
			return nil
		}
		select {
		case <-f.w.Events:
		case err := <-f.w.Errors:
			return err
		case <-gone:
			if _, err := os.Stat(f.path); err == nil {
				return nil
			}
			return errors.New("runc exited before the container's process ran")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (f *fileWatcher) Close() error { return f.w.Close() }
