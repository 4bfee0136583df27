package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// imageProbe is a static program that reports what a container on an
// image root sees: its ids and working directory, the owner and content of
// a file only the image's user may read, whether it can write beside it,
// and whether the host's /usr is there.
const imageProbe = `package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	wd, _ := os.Getwd()
	fmt.Printf("id=%d:%d\nwd=%s\n", os.Getuid(), os.Getgid(), wd)
	var st syscall.Stat_t
	if err := syscall.Stat("/srv/owned", &st); err == nil {
		fmt.Printf("owner=%d:%d\n", st.Uid, st.Gid)
	}
	data, err := os.ReadFile("/srv/owned")
	fmt.Printf("content=%s%v\n", data, err)
	fmt.Printf("write=%v\n", os.WriteFile("/srv/new", []byte("x"), 0o644))
	_, err = os.Stat("/usr/bin")
	fmt.Printf("hostusr=%v\n", err == nil)
	fmt.Println("done=yes")
}
`

// buildImageRoot makes an image's unpacked root as the image store leaves
// it: the probe at /probe (root's), /srv and /srv/owned (0600) of user 1000.
func buildImageRoot(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "go.mod"), "module probe\n\ngo 1.26\n")
	writeFile(t, filepath.Join(src, "main.go"), imageProbe)
	root := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(root, "probe"), ".")
	build.Dir, build.Env = src, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the probe: %v\n%s", err, out)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := filepath.Join(root, "srv")
	if err := os.Mkdir(srv, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(srv, "owned"), "secret")
	for _, p := range []string{srv, filepath.Join(srv, "owned")} {
		if err := os.Lchown(p, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(srv, "owned"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestContainerRunsOnImageRoot(t *testing.T) {
	h := newTestHost(t, 11)
	ctx := testContext(t, time.Minute)
	root := buildImageRoot(t)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-image", Namespace: "ns", Name: "image"})
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := newOutput(), newOutput()
	spec := ContainerSpec{Name: "probe", Args: []string{"/probe"}, ImageRoot: root, UID: 1000, GID: 1000,
		WorkingDir: "/srv", LogPath: filepath.Join(t.TempDir(), "probe.log")}
	c, err := s.Start(ctx, spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	followLog(t, spec.LogPath, c.Done(), map[string]*output{"stdout": stdout, "stderr": stderr})
	if code := waitDone(ctx, t, c, stderr); code != 0 {
		t.Fatalf("the probe exited %d; stderr: %s", code, stderr)
	}
	want := map[string]string{
		"id": "1000:1000", "wd": "/srv", "owner": "1000:1000", "content": "secret<nil>",
		"write": "<nil>", "hostusr": "false", "done": "yes",
	}
	if diff := cmp.Diff(want, parseKV(stdout.String())); diff != "" {
		t.Errorf("what the container sees (-want +got):\n%s\nstderr: %s", diff, stderr)
	}
	// The image's root is as the store left it: the write went to the
	// container's layer, the owners are the image's.
	if _, err := os.Stat(filepath.Join(root, "srv", "new")); err == nil {
		t.Error("the container wrote into the image's root")
	}
	info, err := os.Stat(filepath.Join(root, "srv", "owned"))
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Uid != 1000 {
		t.Errorf("the image's file is owned by %d on the host now, want 1000 as unpacked", st.Uid)
	}
}
