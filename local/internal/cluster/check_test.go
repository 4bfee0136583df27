package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

func TestHasFilesystem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "filesystems")
	if err := os.WriteFile(path, []byte("nodev\tsysfs\nnodev\ttmpfs\n\text4\nnodev\toverlay\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for fs, want := range map[string]bool{"overlay": true, "ext4": true, "btrfs": false, "nodev": false} {
		got, err := hasFilesystem(path, fs)
		if err != nil || got != want {
			t.Errorf("hasFilesystem(%q) = %v, %v; want %v", fs, got, err, want)
		}
	}
}

func TestCanHostPodsAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "needs root (CanHostPods refuses any other user first)")
	}
	before, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	// The check must leave this process where it was: had a thread of it
	// unshared its mount namespace and been the main thread, the process
	// would show that namespace's mounts from then on.
	for range 20 {
		if err := CanHostPods(); err != nil {
			t.Fatalf("CanHostPods() = %v on a root machine with runc (CI installs runc)", err)
		}
	}
	if after, err := os.Readlink("/proc/self/ns/mnt"); err != nil || after != before {
		t.Fatalf("after CanHostPods the process's mount namespace is %s (%v), was %s", after, err, before)
	}
}
