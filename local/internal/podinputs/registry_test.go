package podinputs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/imagestore"
)

func imageRoot(t *testing.T, passwd, group string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"passwd": passwd, "group": group} {
		if err := os.WriteFile(filepath.Join(root, "etc", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestRegistryImageUser(t *testing.T) {
	root := imageRoot(t, "root:x:0:0::/root:/bin/sh\napp:x:1234:2000::/home/app:/bin/sh\n",
		"root:x:0:\nstaff:x:50:app\napp:x:2000:\n")
	tests := map[string]struct {
		user    string
		wantUID int64
		wantGID *int64
		wantErr string
	}{
		"none is root":       {user: "", wantUID: 0},
		"a uid":              {user: "4321", wantUID: 4321},
		"a name":             {user: "app", wantUID: 1234},
		"a name and a group": {user: "app:staff", wantUID: 1234, wantGID: ptr.To[int64](50)},
		"a uid and a gid":    {user: "7:8", wantUID: 7, wantGID: ptr.To[int64](8)},
		"an unknown name":    {user: "nobody-here", wantErr: `image reg/app:v1: user "nobody-here": no matching entries in the image's /etc/passwd`},
		"an unknown group":   {user: "app:wheel", wantErr: `image reg/app:v1: group of user "app:wheel": no matching entries in the image's /etc/group`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			img, err := RegistryImage("reg/app:v1", imagestore.Image{RootFS: root, Config: v1.Config{User: tc.user}})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if img.UID != tc.wantUID || !cmp.Equal(img.GID, tc.wantGID) {
				t.Errorf("uid %d gid %v, want %d %v", img.UID, ptr.Deref(img.GID, -1), tc.wantUID, ptr.Deref(tc.wantGID, -1))
			}
		})
	}
}

func TestRegistryImageConfig(t *testing.T) {
	root := imageRoot(t, "", "")
	digest := v1.Hash{Algorithm: "sha256", Hex: "ab"}
	cfg := v1.Config{Entrypoint: []string{"/app"}, Cmd: []string{"serve"}, Env: []string{"A=1"}, WorkingDir: "/srv"}
	got, err := RegistryImage("reg/app:v1", imagestore.Image{RootFS: root, Digest: digest, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	want := Image{
		Ref: "reg/app:v1", Local: "image sha256:ab of the node's image store",
		Entrypoint: []string{"/app"}, Cmd: []string{"serve"}, Env: []string{"A=1", "PATH=" + systemPath},
		WorkingDir: "/srv", Registry: true, RootFS: root,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image (-want +got):\n%s", diff)
	}
	gid, groups := RootFSUser(imageRoot(t, "app:x:1234:2000::/:/bin/sh\n", "staff:x:50:app,other\nx:x:60:other\n"), 1234)
	if gid != 2000 || !cmp.Equal(groups, []uint32{50}) {
		t.Errorf("RootFSUser = %d, %v; want 2000, [50]", gid, groups)
	}
}

func TestRegistryImageReadsPasswdInsideTheRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A link to the host's passwd must not resolve the host's users.
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "etc", "passwd")); err != nil {
		t.Fatal(err)
	}
	if _, err := RegistryImage("reg/app:v1", imagestore.Image{RootFS: root, Config: v1.Config{User: "root"}}); err == nil {
		t.Error("user root resolved through a link to the host's /etc/passwd")
	}
}
