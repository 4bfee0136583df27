package containerlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Path is where attempt of container logs below the pod's directory.
func Path(podDir, container string, attempt int) string {
	return filepath.Join(podDir, "logs", container, strconv.Itoa(attempt)+".log")
}

// Create makes the log directory of a container and an empty log file for
// its attempt, which the container's monitor then appends to, and returns
// the file's path. The logs of attempts before the previous one are
// removed.
func Create(podDir, container string, attempt int) (string, error) {
	path := Path(podDir, container, attempt)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("creating the log directory: %w", err)
	}
	if err := pruneAttempts(filepath.Dir(path), attempt-1); err != nil {
		return "", fmt.Errorf("removing old logs: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return "", fmt.Errorf("creating the log file: %w", err)
	}
	return path, f.Close()
}
