package imagestore

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var onAMD64 = Options{Platform: amd64}

// archiveTestImage is a linux/amd64 image whose /hello holds body.
func archiveTestImage(t *testing.T, body string) v1.Image {
	t.Helper()
	return image(t, v1.Config{Cmd: []string{"/hello"}}, layer(t, file("hello", body)))
}

// dockerArchive writes `docker save` tarball of images by tag.
func dockerArchive(t *testing.T, images map[string]v1.Image) string {
	t.Helper()
	refs := map[name.Reference]v1.Image{}
	for ref, img := range images {
		tag, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		refs[tag] = img
	}
	p := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.MultiRefWriteToFile(p, refs); err != nil {
		t.Fatal(err)
	}
	return p
}

// ociLayout writes an OCI layout directory holding add, each with the
// annotations given.
func ociLayout(t *testing.T, add func(layout.Path)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "oci")
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	add(lp)
	return dir
}

func refName(ref string) layout.Option {
	return layout.WithAnnotations(map[string]string{annotationRefName: ref})
}

// tarDir writes dir as a tar and returns its path.
func tarDir(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "oci.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// readHello is /hello of the image ref resolves to in s.
func readHello(t *testing.T, s *Store, ref string) (Image, string) {
	t.Helper()
	img, ok, err := s.Present(ref)
	if err != nil || !ok {
		t.Fatalf("Present(%s) = %v, %v; want the loaded image", ref, ok, err)
	}
	data, err := os.ReadFile(filepath.Join(img.RootFS, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	return img, string(data)
}

func digestOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLoadArchives(t *testing.T) {
	one, two := archiveTestImage(t, "one"), archiveTestImage(t, "two")
	arm := mutateArch(t, archiveTestImage(t, "arm"), "arm64")
	index := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: two, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
	layoutDir := ociLayout(t, func(lp layout.Path) {
		if err := lp.AppendImage(one, refName("example.com/one:v1")); err != nil {
			t.Fatal(err)
		}
		if err := lp.AppendIndex(index, layout.WithAnnotations(map[string]string{annotationContainerdName: "docker.io/fluent/fluent-bit:3.2.2"})); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name, path string
		names      []string
		want       map[string]string // reference: /hello
	}{
		{"docker save tarball, two images by RepoTags", dockerArchive(t, map[string]v1.Image{"fluent/fluent-bit:3.2.2": one, "example.com/two:v2": two}), nil,
			map[string]string{"docker.io/fluent/fluent-bit:3.2.2": "one", "example.com/two:v2": "two"}},
		{"docker save tarball under a given name", dockerArchive(t, map[string]v1.Image{"example.com/one:v1": one}), []string{"mine:dev"},
			map[string]string{"index.docker.io/library/mine:dev": "one"}},
		{"OCI layout directory, an index giving the node's platform", layoutDir, nil,
			map[string]string{"example.com/one:v1": "one", "fluent/fluent-bit:3.2.2": "two"}},
		{"OCI layout tar", tarDir(t, layoutDir), nil,
			map[string]string{"example.com/one:v1": "one", "index.docker.io/fluent/fluent-bit:3.2.2": "two"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, onAMD64)
			loaded, err := s.Load(tc.path, tc.names)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 2}[tc.names != nil]; len(loaded) != want {
				t.Errorf("loaded %d images, want %d", len(loaded), want)
			}
			for ref, body := range tc.want {
				img, got := readHello(t, s, ref)
				if got != body {
					t.Errorf("%s: /hello = %q, want %q", ref, got, body)
				}
				want := map[string]v1.Image{"one": one, "two": two}[body]
				if d := digestOf(t, want); img.Digest != d {
					t.Errorf("%s: digest %s, want the image's %s", ref, img.Digest, d)
				}
			}
			assertNoTemp(t, s)
		})
	}
}

// A load from another process (ray-local load beside the node) is seen by
// the node's store, and leaves the node's pulls under way in tmp/ alone.
func TestLoadAsGuest(t *testing.T) {
	owner := openStore(t, onAMD64)
	pulling := filepath.Join(owner.dir, "tmp", "pull-under-way")
	if err := os.Mkdir(pulling, 0o700); err != nil {
		t.Fatal(err)
	}
	guest, err := Open(owner.dir, Options{Platform: amd64, Guest: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := guest.Load(dockerArchive(t, map[string]v1.Image{"fluent/fluent-bit:3.2.2": archiveTestImage(t, "one")}), nil); err != nil {
		t.Fatal(err)
	}
	if _, got := readHello(t, owner, "fluent/fluent-bit:3.2.2"); got != "one" {
		t.Errorf("/hello = %q", got)
	}
	if _, err := os.Stat(pulling); err != nil {
		t.Errorf("the owner's pull under way: %v", err)
	}
}

// A loaded image is collected as a pulled one: kept while in use or
// recently used, removed otherwise.
func TestLoadedImagesAreCollected(t *testing.T) {
	clk := &clock{now: time.Unix(1800000000, 0)}
	s := openStore(t, Options{Platform: amd64, Now: clk.Now})
	one, two := archiveTestImage(t, "one"), archiveTestImage(t, "two")
	if _, err := s.Load(dockerArchive(t, map[string]v1.Image{"a:1": one, "b:1": two}), nil); err != nil {
		t.Fatal(err)
	}
	if removed, err := s.GC(nil, GCPolicy{MinAge: time.Minute}); err != nil || len(removed) != 0 {
		t.Fatalf("GC right after the load removed %v (%v); want nothing", removed, err)
	}
	clk.now = clk.now.Add(2 * time.Minute)
	removed, err := s.GC(map[v1.Hash]bool{digestOf(t, one): true}, GCPolicy{MinAge: time.Minute})
	if err != nil || len(removed) != 1 || removed[0].Digest != digestOf(t, two) {
		t.Fatalf("GC removed %v (%v); want b:1 only", removed, err)
	}
	if _, got := readHello(t, s, "a:1"); got != "one" {
		t.Errorf("a:1 /hello = %q", got)
	}
}

// garble rewrites the tar at p with the content of the entries match
// selects reversed, and says how many it changed.
func garble(t *testing.T, p string, match func(string) bool) int {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tr, tw := tar.NewReader(bytes.NewReader(data)), tar.NewWriter(&out)
	changed := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if match(hdr.Name) && len(body) > 32 {
			for i, j := 16, len(body)-16; i < j; i, j = i+1, j-1 {
				body[i], body[j] = body[j], body[i]
			}
			changed++
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return changed
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadBadInputs(t *testing.T) {
	good := archiveTestImage(t, "good")
	bigLayer := layer(t, file("big", strings.Repeat("ray-operator ", 4096)))
	big := image(t, v1.Config{}, bigLayer)
	corruptDocker := dockerArchive(t, map[string]v1.Image{"example.com/a-good:v1": good, "example.com/big:v1": big})
	bigDigest, err := bigLayer.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if garble(t, corruptDocker, func(n string) bool { return strings.Contains(n, bigDigest.Hex) }) != 1 {
		t.Fatal("no layer garbled")
	}
	corruptLayout := tarDir(t, ociLayout(t, func(lp layout.Path) {
		if err := lp.AppendImage(big, refName("example.com/big:v1")); err != nil {
			t.Fatal(err)
		}
	}))
	if garble(t, corruptLayout, func(n string) bool { return strings.HasSuffix(n, bigDigest.Hex) }) != 1 {
		t.Fatal("no layer garbled")
	}
	config, err := good.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	lyingConfig := tarDir(t, ociLayout(t, func(lp layout.Path) {
		if err := lp.AppendImage(good, refName("example.com/good:v1")); err != nil {
			t.Fatal(err)
		}
		if err := lp.RemoveBlob(config); err != nil {
			t.Fatal(err)
		}
		if err := lp.WriteBlob(config, io.NopCloser(strings.NewReader(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`))); err != nil {
			t.Fatal(err)
		}
	}))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	armOnly := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: mutateArch(t, good, "arm64"),
		Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
	for _, tc := range []struct {
		name, path string
		names      []string
		want       string
	}{
		{"a text file", writeFile(t, []byte("not a tar at all, but long enough to be read as one's header..")), nil, "not an image archive"},
		{"a gzip-compressed file", writeFile(t, gz.Bytes()), nil, "decompress it first"},
		{"a missing file", filepath.Join(t.TempDir(), "missing.tar"), nil, "no such file"},
		{"a tar of other files", tarDir(t, t.TempDir()), nil, "neither manifest.json nor oci-layout"},
		{"an image for another platform", dockerArchive(t, map[string]v1.Image{"example.com/arm:v1": mutateArch(t, good, "arm64")}), nil, "no matching platform"},
		{"an index without the node's platform", tarDir(t, ociLayout(t, func(lp layout.Path) {
			if err := lp.AppendIndex(armOnly, refName("example.com/arm:v1")); err != nil {
				t.Fatal(err)
			}
		})), nil, "no image for linux/amd64"},
		{"a corrupt layer after a good image (docker save)", corruptDocker, nil, "example.com/big:v1"},
		{"a corrupt layer (OCI layout)", corruptLayout, nil, "corrupt layer"},
		{"a config whose digest is not its name (OCI layout)", lyingConfig, nil, "digest mismatch"},
		{"an image with no name", tarDir(t, ociLayout(t, func(lp layout.Path) {
			if err := lp.AppendImage(good); err != nil {
				t.Fatal(err)
			}
		})), nil, "has no name in the archive"},
		{"a name for an archive of two images", dockerArchive(t, map[string]v1.Image{"a:1": good, "b:1": big}), []string{"c:1"}, "holds 2 images"},
		{"a name that is not a tag", dockerArchive(t, map[string]v1.Image{"a:1": good}), []string{"UPPER:1"}, "want a tag reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, onAMD64)
			_, err := s.Load(tc.path, tc.names)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v; want an error saying %q", err, tc.want)
			}
			t.Log(err)
			assertNothingUnpacked(t, s)
			assertNoTemp(t, s)
			if refs, err := os.ReadDir(filepath.Join(s.dir, "refs")); err != nil || len(refs) != 0 {
				t.Errorf("refs/ holds %v (%v); want nothing", refs, err)
			}
		})
	}
}

func assertNoTemp(t *testing.T, s *Store) {
	t.Helper()
	for _, d := range []string{"tmp", "trash"} {
		if entries, err := os.ReadDir(filepath.Join(s.dir, d)); err != nil || len(entries) != 0 {
			t.Errorf("%s/ holds %v (%v); want nothing", d, entries, err)
		}
	}
}
