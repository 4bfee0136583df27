package imagestore

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

var amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}

// tree lists what is under dir: "path mode uid:gid" and a regular file's
// content or a symlink's target, with hard-linked files marked.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	inodes := map[uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %s %d:%d", rel, info.Mode(), st.Uid, st.Gid)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case info.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			line += " " + string(data)
			if first, ok := inodes[st.Ino]; ok {
				line += " (same file as " + first + ")"
			}
			inodes[st.Ino] = rel
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestPullAppliesLayersInOrderWithWhiteouts(t *testing.T) {
	base := layer(t,
		dir("etc/"), file("etc/passwd", "root:x:0:0::/root:/bin/sh\n"), file("etc/old", "old"),
		file("etc/shadow", "secret").owner(0, 42).perm(0o640),
		dir("home/app/").owner(1000, 1000).perm(0o750),
		dir("opt/x/"), file("opt/x/1", "1"), file("opt/x/2", "2"),
		file("bin/tool", "tool").perm(0o4755),
		entry{name: "bin/tool2", typ: tar.TypeLink, link: "bin/tool"},
		entry{name: "etc/link", typ: tar.TypeSymlink, link: "/etc/passwd", mode: 0o777},
	)
	top := layer(t,
		file("etc/.wh.old", ""),
		dir("opt/x/"), file("opt/x/3", "3"), file("opt/x/.wh..wh..opq", ""),
		file("home/app/data", "mine").owner(1000, 1000).perm(0o600),
		file("bin/tool", "new tool").perm(0o755),
	)
	cfg := v1.Config{Entrypoint: []string{"/bin/tool"}, Cmd: []string{"run"}, Env: []string{"A=1"}, WorkingDir: "/home/app", User: "1000:1000"}
	img := image(t, cfg, base, top)
	host := serve(t, nil)
	digest := push(t, host+"/app:v1", img)

	s := openStore(t, Options{Platform: amd64})
	got, err := s.Pull(t.Context(), host+"/app:v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != digest {
		t.Errorf("digest %s, want %s", got.Digest, digest)
	}
	if diff := cmp.Diff(cfg, got.Config, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	want := []string{
		"bin drwxr-xr-x 0:0",
		"bin/tool -rwxr-xr-x 0:0 new tool",
		"bin/tool2 urwxr-xr-x 0:0 tool",
		"etc drwxr-xr-x 0:0",
		"etc/link Lrwxrwxrwx 0:0 -> /etc/passwd",
		"etc/passwd -rw-r--r-- 0:0 root:x:0:0::/root:/bin/sh\n",
		"etc/shadow -rw-r----- 0:42 secret",
		"home drwxr-xr-x 0:0",
		"home/app drwxr-x--- 1000:1000",
		"home/app/data -rw------- 1000:1000 mine",
		"opt drwxr-xr-x 0:0",
		"opt/x drwxr-xr-x 0:0",
		"opt/x/3 -rw-r--r-- 0:0 3",
	}
	if diff := cmp.Diff(want, tree(t, got.RootFS)); diff != "" {
		t.Errorf("root filesystem (-want +got):\n%s", diff)
	}
	if got.Size <= 0 {
		t.Errorf("size %d, want the root filesystem's size", got.Size)
	}

	// The tag and the digest now resolve without a registry.
	for _, ref := range []string{host + "/app:v1", host + "/app@" + digest.String()} {
		present, ok, err := s.Present(ref)
		if err != nil || !ok || present.Digest != digest || present.RootFS != got.RootFS {
			t.Errorf("Present(%s) = %+v, %v, %v; want the pulled image", ref, present, ok, err)
		}
	}
	if _, ok, err := s.Present(host + "/app:v2"); ok || err != nil {
		t.Errorf("Present of a tag never pulled = %v, %v; want false, nil", ok, err)
	}
}

func TestPullByDigestChoosesTheNodesPlatform(t *testing.T) {
	amd := image(t, v1.Config{Cmd: []string{"amd"}}, layer(t, file("arch", "amd64")))
	arm := mutateArch(t, image(t, v1.Config{Cmd: []string{"arm"}}, layer(t, file("arch", "arm64"))), "arm64")
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
	host := serve(t, nil)
	idxDigest := pushIndex(t, host+"/multi:v1", idx)
	armDigest, _ := arm.Digest()

	s := openStore(t, Options{Platform: v1.Platform{OS: "linux", Architecture: "arm64"}})
	got, err := s.Pull(t.Context(), host+"/multi@"+idxDigest.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != armDigest {
		t.Errorf("digest %s, want the arm64 manifest's %s", got.Digest, armDigest)
	}
	data, err := os.ReadFile(filepath.Join(got.RootFS, "arch"))
	if err != nil || string(data) != "arm64" {
		t.Errorf("arch file %q, %v; want arm64", data, err)
	}
	present, ok, err := s.Present(host + "/multi@" + idxDigest.String())
	if err != nil || !ok || present.Digest != armDigest {
		t.Errorf("Present by the index digest = %v, %v, %v; want the arm64 image", present.Digest, ok, err)
	}
}

func TestPullRefusesLayersThatEscapeTheRoot(t *testing.T) {
	outside := t.TempDir()
	tests := map[string]v1.Layer{
		"through a symlink": layer(t, entry{name: "up", typ: tar.TypeSymlink, link: outside}, file("up/pwned", "x")),
		"through a relative symlink": layer(t, entry{name: "a/up", typ: tar.TypeSymlink, link: "../../../../../../../../" + outside},
			file("a/up/pwned", "x")),
		"a hard link to a host file": layer(t, entry{name: "pwned", typ: tar.TypeLink, link: "../../../../../../../../" + outside + "/target"}),
	}
	if err := os.WriteFile(filepath.Join(outside, "target"), []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, l := range tests {
		t.Run(name, func(t *testing.T) {
			host := serve(t, nil)
			push(t, host+"/evil:v1", image(t, v1.Config{}, l))
			s := openStore(t, Options{Platform: amd64})
			_, err := s.Pull(t.Context(), host+"/evil:v1", nil)
			if pe, ok := err.(*PullError); !ok || pe.Cause != CauseCorruptLayer {
				t.Errorf("Pull = %v; want a corrupt layer", err)
			}
			if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
				t.Errorf("the layer wrote %s outside the store", filepath.Join(outside, "pwned"))
			}
			assertNothingUnpacked(t, s)
		})
	}
}

// GNU and Python tar fill a layer's last 10240-byte record with zeros past
// the end-of-archive blocks: the diff ID covers them, and so must the check.
func TestPullLayerPaddedToARecord(t *testing.T) {
	data := tarBytes(t, file("hello", "padded"))
	data = append(data, make([]byte, 10240-len(data)%10240)...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	host := serve(t, nil)
	push(t, host+"/padded:v1", image(t, v1.Config{}, l))
	img, err := openStore(t, Options{Platform: amd64}).Pull(t.Context(), host+"/padded:v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(img.RootFS, "hello")); err != nil || string(got) != "padded" {
		t.Errorf("/hello = %q, %v", got, err)
	}
}
