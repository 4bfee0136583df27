package sandbox

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

// TestRootBaseCopiesTheAllowListOnly builds a base root from a fake host
// root: allow-listed /etc files and symlinks are copied, everything else
// (shadow, SSH keys, a file only root may read) is not; system and /etc
// directories come back as read-only binds; everything belongs to the
// pod's root, /home/ray to ray.
func TestRootBaseCopiesTheAllowListOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "chown needs root (CI runs as root)")
	}
	host := t.TempDir()
	for p, mode := range map[string]os.FileMode{
		"etc/nsswitch.conf": 0o644, "etc/ld.so.cache": 0o644, "etc/shadow": 0o640,
		"etc/ssh/ssh_host_ed25519_key": 0o600, "etc/login.defs": 0o600, "usr/bin/sh": 0o755,
		"etc/alternatives/awk": 0o755, "etc/ssl/certs/ca-certificates.crt": 0o644,
	} {
		writeHostFile(t, filepath.Join(host, p), mode)
	}
	if err := os.Symlink("usr/bin", filepath.Join(host, "bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../usr/share/zoneinfo/UTC", filepath.Join(host, "etc/localtime")); err != nil {
		t.Fatal(err)
	}
	ids := idMap{base: userNSBase, mapped: true}
	base := filepath.Join(t.TempDir(), "base")
	binds, err := rootBase(base, host, ids)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/usr", "/etc/alternatives", "/etc/ssl/certs"}, binds); diff != "" {
		t.Errorf("binds (-want +got):\n%s", diff)
	}
	for _, p := range []string{"etc/nsswitch.conf", "etc/ld.so.cache", "etc/passwd", "etc/group", "etc/pip.conf", "root", "var/tmp"} {
		assertOwner(t, filepath.Join(base, p), userNSBase, userNSBase)
	}
	assertOwner(t, filepath.Join(base, "home/ray"), userNSBase+rayUID, userNSBase+usersGID)
	for _, p := range []string{"etc/shadow", "etc/ssh", "etc/login.defs", "etc/alternatives", "usr/bin"} {
		if _, err := os.Lstat(filepath.Join(base, p)); err == nil {
			t.Errorf("%s was copied into the base root", p)
		}
	}
	for link, want := range map[string]string{"bin": "usr/bin", "etc/localtime": "../usr/share/zoneinfo/UTC"} {
		if got, err := os.Readlink(filepath.Join(base, link)); err != nil || got != want {
			t.Errorf("%s -> %q (%v), want -> %q", link, got, err, want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(base, "root")); len(entries) != 0 {
		t.Errorf("/root of the base root holds %d entries, want none", len(entries))
	}
}

func writeHostFile(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), mode); err != nil {
		t.Fatal(err)
	}
}

func assertOwner(t *testing.T, p string, uid, gid int) {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := info.Sys().(*syscall.Stat_t)
	if int(st.Uid) != uid || int(st.Gid) != gid {
		t.Errorf("%s is owned by %d:%d, want %d:%d", p, st.Uid, st.Gid, uid, gid)
	}
}
