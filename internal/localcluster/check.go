package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// CanHostPods says whether this machine can run real pods, and if not,
// why, in one line: it needs root, network and mount namespaces, overlayfs
// and runc.
func CanHostPods() error {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Errorf("real pods need root (running as uid %d)", uid)
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return errors.New("runc is not installed (apt-get install runc)")
	}
	if err := tryNamespaces(); err != nil {
		return fmt.Errorf("cannot create network and mount namespaces: %w", err)
	}
	ok, err := hasFilesystem("/proc/filesystems", "overlay")
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("the kernel has no overlayfs")
	}
	return nil
}

// tryNamespaces creates a network and a mount namespace on a thread of its
// own, which is then thrown away (a goroutine that ends locked to its
// thread takes the thread with it).
func tryNamespaces() error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		errc <- unix.Unshare(unix.CLONE_NEWNET | unix.CLONE_NEWNS)
	}()
	return <-errc
}

// hasFilesystem reports whether the kernel's filesystem list (path, in
// /proc/filesystems' format) names fs.
func hasFilesystem(path, fs string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("reading the kernel's filesystems: %w", err)
	}
	defer func() { _ = f.Close() }()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) > 0 && fields[len(fields)-1] == fs {
			return true, nil
		}
	}
	return false, scanner.Err()
}
