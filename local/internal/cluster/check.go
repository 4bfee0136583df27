package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// CanHostPods says whether this machine can run real pods, and if not,
// why, in one line: it needs root, network and mount namespaces, overlayfs,
// runc and conmon.
func CanHostPods() error {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Errorf("real pods need root (running as uid %d)", uid)
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return errors.New("runc is not installed (apt-get install runc)")
	}
	if _, err := exec.LookPath("conmon"); err != nil {
		return errors.New("conmon is not installed (apt-get install conmon)")
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

// tryNamespaces starts `true` in a network and a mount namespace of its
// own. A child process, not a thread of this one: a thread that unshared
// its mount namespace and was the main thread would stay (Go wedges a
// locked main thread rather than end it), and /proc/self/mountinfo, which
// follows the main thread, would then show that private copy instead of
// the mounts the node makes.
func tryNamespaces() error {
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS}
	return cmd.Run()
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
