package sandbox

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// otherHostUID is a host user that is neither root nor any pod's: the
// host's nobody.
const otherHostUID = 65534

// TestSecretsUnreadableByOtherHostUsers mounts a secret-like volume (a
// 0644 file owned by the pod's root, as the node writes secret volumes)
// into a container running as a non-root user. The container reads the
// file; another host user reaches neither it nor the container's root: not
// at its place in the pod's directory, not where it is staged for runc
// under the run directory. The state directory is private (0700, so that
// the volume is staged) or one every host user may pass through (as
// <repo>/.cache/local is).
func TestSecretsUnreadableByOtherHostUsers(t *testing.T) {
	for name, tc := range map[string]struct {
		k    int
		mode os.FileMode
	}{
		"private state directory":     {k: 22, mode: 0o700},
		"state directory others pass": {k: 23, mode: 0o755},
	} {
		t.Run(name, func(t *testing.T) { testSecretsUnreadable(t, tc.k, tc.mode) })
	}
}

func testSecretsUnreadable(t *testing.T, k int, stateMode os.FileMode) {
	h := newTestHost(t, k)
	ctx := testContext(t, time.Minute)
	for _, d := range []string{filepath.Dir(h.cfg.StateDir), h.cfg.StateDir} {
		if err := os.Chmod(d, stateMode); err != nil {
			t.Fatal(err)
		}
	}
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-secret", Namespace: "ns", Name: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	vol := filepath.Join(s.Dir(), "volumes", "secret")
	if err := os.MkdirAll(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(vol, "token")
	writeFile(t, token, "s3cret")
	uid, gid := s.HostIDs(0, 0)
	for _, p := range []string{filepath.Join(s.Dir(), "volumes"), vol, token} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	c, out, stderr := startBash(t, s, "reader", `echo "token=$(cat /secret/token)"; echo "uid=$(id -u)"; exec sleep 60`, func(cs *ContainerSpec) {
		cs.Mounts = []Mount{{Source: vol, Destination: "/secret", ReadOnly: true}}
		cs.UID, cs.GID = 1000, 100
	})
	if err := out.waitFor(ctx, "uid="); err != nil {
		t.Fatalf("%v; stderr: %s", err, stderr)
	}
	if got := parseKV(out.String()); got["token"] != "s3cret" || got["uid"] != "1000" {
		t.Errorf("the container (uid %s) read %q, want s3cret as uid 1000; stderr: %s", got["uid"], got["token"], stderr)
	}

	copies := filesNamed(t, "token", s.Dir(), c.runDir)
	if len(copies) == 0 {
		t.Fatal("found the token nowhere on the host")
	}
	for _, p := range append(copies, filepath.Join(c.runDir, "rootfs", "etc", "passwd")) {
		if data, err := readAs(otherHostUID, p); err == nil {
			t.Errorf("host uid %d read %s: %q", otherHostUID, p, data)
		}
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	waitDone(ctx, t, c, stderr)
}

// filesNamed lists the files called name under the dirs, as root sees them.
func filesNamed(t *testing.T, name string, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Name() == "rootfs" && d.IsDir() {
				return fs.SkipDir
			}
			if d.Name() == name && !d.IsDir() {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// readAs reads path with cat running as host uid (and gid) id, without
// supplementary groups.
func readAs(id uint32, path string) (string, error) {
	cmd := exec.Command("cat", path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: id, Gid: id, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
