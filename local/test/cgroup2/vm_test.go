// Package cgroup2 boots a Linux kernel in qemu with cgroup2 mounted at
// /sys/fs/cgroup and runs the sandbox's cgroup tests there (its
// TestCgroupV2VM tests), which a cgroup v1 host cannot run: pids.max of a
// pod, memory.max of the pods' parent, usage read back, removal. make
// test-cgroup2 runs it, with hack/cgroup2-vm.sh's kernel and busybox.
package cgroup2

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

// assetsEnv names the directory of vmlinuz and busybox that
// hack/cgroup2-vm.sh prints.
const assetsEnv = "RAY_OPERATOR_CGROUP2_VM"

// guestTests are the sandbox tests the VM must pass; a skip, which is what
// they do outside the VM, is a failure here.
var guestTests = []string{
	"TestCgroupV2VMDetected", "TestCgroupV2VMPidsLimit", "TestCgroupV2VMPodsMemoryLimit", "TestCgroupV2VMUsage",
	"TestCgroupV2VMRefusesBelowAProcess", "TestCgroupV2VMRunc", "TestCgroupV2VMPodCPUShares",
}

// initScript is the guest's /init. runc's pivot_root cannot leave the
// initramfs, so it first copies itself into a tmpfs and switches to it;
// there it mounts the kernel file systems and cgroup2 at /sys/fs/cgroup,
// runs the sandbox's tests, prints their exit status and powers off.
const initScript = `#!/bin/busybox sh
if [ "$1" != switched ]; then
	/bin/busybox mkdir /newroot
	/bin/busybox mount -t tmpfs tmpfs /newroot
	for f in /*; do [ "$f" = /newroot ] || /bin/busybox cp -a "$f" /newroot/; done
	exec /bin/busybox switch_root /newroot /init switched
fi
/bin/busybox --install -s /bin
export PATH=/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo "RAYOP-VM booted $(cut -d' ' -f1 /proc/uptime)"
RAYOP_CGROUP2_VM=1 /sandbox.test -test.v -test.timeout 3m -test.run '^TestCgroupV2VM'
echo "RAYOP-VM exit $?"
poweroff -f
`

func TestCgroupV2InVM(t *testing.T) {
	assets := os.Getenv(assetsEnv)
	if assets == "" {
		capability.Missingf(t, "%s is unset: make test-cgroup2 sets it (hack/cgroup2-vm.sh)", assetsEnv)
	}
	initrd := buildInitramfs(t, filepath.Join(assets, "busybox"))
	// Under TCG on a busy 2-core machine the VM takes 10 to 40 s.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := bootFirstWorking(ctx, t, filepath.Join(assets, "vmlinuz"), initrd)
	if err != nil {
		t.Fatalf("%v; console:\n%s", err, out)
	}
	if !strings.Contains(out, "RAYOP-VM exit 0") {
		t.Errorf("the sandbox's tests failed in the VM; console:\n%s", out)
	}
	for _, name := range guestTests {
		if !strings.Contains(out, "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass in the VM", name)
		}
	}
}

// buildInitramfs writes a newc cpio archive of /init, busybox and the
// sandbox package's test binary, built static (cgo off) for the guest.
func buildInitramfs(t *testing.T, busybox string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{"bin", "proc", "sys", "dev", "tmp", "run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "test", "-c", "-o", filepath.Join(root, "sandbox.test"), "../../internal/sandbox/")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the sandbox's tests: %v\n%s", err, out)
	}
	copyFile(t, busybox, filepath.Join(root, "bin/busybox"))
	copyRunc(t, root)
	if err := os.WriteFile(filepath.Join(root, "init"), []byte(initScript), 0o755); err != nil {
		t.Fatal(err)
	}
	initrd := filepath.Join(t.TempDir(), "initramfs.cpio")
	cpio := exec.Command("sh", "-c", "find . | cpio --quiet -o -H newc >"+initrd)
	cpio.Dir = root
	if out, err := cpio.CombinedOutput(); err != nil {
		t.Fatalf("cpio: %v\n%s", err, out)
	}
	return initrd
}

// copyRunc copies the host's runc, which the local node runs, into root
// at its path, with the shared libraries it links (Debian's is dynamic:
// libseccomp, libc and the loader).
func copyRunc(t *testing.T, root string) {
	t.Helper()
	runc, err := exec.LookPath("runc")
	if err != nil {
		t.Fatalf("runc is not installed (hack/node-packages.sh installs it): %v", err)
	}
	files := []string{runc}
	if out, err := exec.Command("ldd", runc).Output(); err == nil {
		files = append(files, libraryPaths(string(out))...)
	}
	for _, f := range files {
		copyFile(t, f, filepath.Join(root, f))
	}
}

// libraryPaths are the absolute paths in ldd's output.
func libraryPaths(ldd string) []string {
	var paths []string
	for _, field := range strings.Fields(ldd) {
		if strings.HasPrefix(field, "/") {
			paths = append(paths, field)
		}
	}
	return paths
}

// copyFile copies what from names (through links) to an executable file.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// bootFirstWorking boots with KVM, and with TCG (emulation) when the
// kernel printed nothing under KVM within kvmDeadline: nested KVM may hang
// the guest before its first line (seen on this project's machines).
func bootFirstWorking(ctx context.Context, t *testing.T, kernel, initrd string) (string, error) {
	const kvmDeadline = 5 * time.Second
	if _, err := os.Stat("/dev/kvm"); err == nil {
		out, err := boot(ctx, t, "kvm", kernel, initrd, kvmDeadline)
		if err != errNoFirstLine {
			return out, err
		}
		t.Logf("no console line under KVM within %v: booting with TCG", kvmDeadline)
	}
	return boot(ctx, t, "tcg", kernel, initrd, time.Minute)
}

var errNoFirstLine = fmt.Errorf("the kernel printed nothing")

// linuxVersion is the kernel's first console line.
var linuxVersion = regexp.MustCompile(`Linux version \d`)

// kernelArgs: the console on the serial port from the first line; a
// kernel that panics (a soft lockup or a task stuck for a minute included)
// reboots, which ends qemu, so that a stuck guest shows why.
const kernelArgs = "console=ttyS0 earlyprintk=serial,ttyS0 panic=-1 softlockup_panic=1 hung_task_panic=1 hung_task_timeout_secs=60"

// boot runs the VM to its power-off and returns the console output; it
// stops early with errNoFirstLine when the kernel's first line takes
// longer than firstLine. The guest's test lines are logged as they come.
func boot(ctx context.Context, t *testing.T, accel, kernel, initrd string, firstLine time.Duration) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-accel", accel, "-m", "768", "-smp", "2",
		"-nographic", "-no-reboot", "-nic", "none", "-kernel", kernel, "-initrd", initrd, "-append", kernelArgs)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	var console strings.Builder
	seen, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			console.WriteString(line + "\n")
			switch {
			case linuxVersion.MatchString(line) && !closed(seen):
				close(seen)
			case strings.HasPrefix(line, "RAYOP-VM"), strings.HasPrefix(strings.TrimSpace(line), "--- "), strings.HasPrefix(line, "=== RUN"):
				t.Logf("%s %v: %s", accel, time.Since(start).Round(100*time.Millisecond), line)
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(firstLine):
		cancel()
	case <-done:
	}
	<-done
	err = cmd.Wait()
	if !closed(seen) {
		return console.String(), errNoFirstLine
	}
	t.Logf("%s: VM ran %v", accel, time.Since(start).Round(time.Millisecond))
	return console.String(), err
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
