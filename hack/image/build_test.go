package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// operatorOptions build the operator of this repository as `make image`
// does, stamped with version.
func operatorOptions(version string) Options {
	return Options{
		Dir:        "../..",
		Package:    "./cmd/ray-operator",
		LDFlags:    "-X github.com/ray-operator/ray-operator/internal/buildinfo.version=" + version,
		Version:    version,
		Revision:   "0123456789abcdef0123456789abcdef01234567",
		Source:     "https://example.com/ray-operator",
		Created:    time.Unix(1764979200, 0).UTC(),
		Platforms:  []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}},
		BinaryPath: "/ray-operator",
		Links:      []string{"/manager"},
	}
}

func digestOf(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestBuild builds the operator's image three times: twice from the same
// sources and stamp (the same index digest) and once with another version
// stamp (another digest); the first build's images are checked in detail.
func TestBuild(t *testing.T) {
	first, err := Build(t.Context(), operatorOptions("v9.8.7"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("platforms", func(t *testing.T) { checkPlatforms(t, first) })
	for _, p := range operatorOptions("").Platforms {
		img, err := platformImageOf(first, p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.Architecture+"/config", func(t *testing.T) { checkConfig(t, img, p) })
		t.Run(p.Architecture+"/files", func(t *testing.T) { checkFiles(t, img, p) })
	}
	t.Run("outputs", func(t *testing.T) { checkOutputs(t, first) })

	again, err := Build(t.Context(), operatorOptions("v9.8.7"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digestOf(t, first), digestOf(t, again); a != b {
		t.Errorf("two builds of the same sources: index digests %s and %s, want equal", a, b)
	}
	other, err := Build(t.Context(), operatorOptions("v9.8.8"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digestOf(t, first), digestOf(t, other); a == b {
		t.Errorf("another version stamp gave the same index digest %s", a)
	}
}

func checkPlatforms(t *testing.T, idx v1.ImageIndex) {
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", m.MediaType, types.OCIImageIndex)
	}
	var got []string
	for _, d := range m.Manifests {
		got = append(got, d.Platform.String()+" "+string(d.MediaType))
	}
	want := []string{"linux/amd64 " + string(types.OCIManifestSchema1), "linux/arm64 " + string(types.OCIManifestSchema1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index manifests (-want +got):\n%s", diff)
	}
}

func checkConfig(t *testing.T, img v1.Image, p v1.Platform) {
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	o := operatorOptions("v9.8.7")
	want := v1.Config{
		User:       "65532",
		Entrypoint: []string{"/ray-operator"},
		WorkingDir: "/",
		Labels: map[string]string{
			LabelVersion:  "v9.8.7",
			LabelRevision: o.Revision,
			LabelSource:   o.Source,
			LabelCreated:  "2025-12-06T00:00:00Z",
		},
	}
	if diff := cmp.Diff(want, cf.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if cf.OS != p.OS || cf.Architecture != p.Architecture || !cf.Created.Equal(o.Created) {
		t.Errorf("config platform %s/%s created %s, want %s created %s", cf.OS, cf.Architecture, cf.Created, p, o.Created)
	}
}

// layerFile is what a layer holds at one path.
type layerFile struct {
	hdr  *tar.Header
	body []byte
}

// layerFiles reads every layer's entries, checking that each carries the
// build's time, no owner names and the order the builder gives them.
func layerFiles(t *testing.T, img v1.Image, created time.Time) map[string]layerFile {
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]layerFile{}
	for _, l := range layers {
		r, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		var prev string
		tr := tar.NewReader(r)
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
			if !hdr.ModTime.Equal(created) || hdr.Uname != "" || hdr.Gname != "" || hdr.Name <= prev {
				t.Errorf("%s: modified %s, owner %q:%q, after %q; want %s, no names, sorted", hdr.Name, hdr.ModTime, hdr.Uname, hdr.Gname, prev, created)
			}
			prev = hdr.Name
			files[hdr.Name] = layerFile{hdr, body}
		}
		_ = r.Close()
	}
	return files
}

func checkFiles(t *testing.T, img v1.Image, p v1.Platform) {
	files := layerFiles(t, img, operatorOptions("").Created)
	checkCACertificates(t, files[CACertificatesPath])
	bin, ok := files["ray-operator"]
	if !ok {
		t.Fatal("no /ray-operator in the image")
	}
	if bin.hdr.Mode != 0o755 || bin.hdr.Uid != 0 || bin.hdr.Gid != 0 {
		t.Errorf("/ray-operator: mode %o owner %d:%d, want 755 0:0", bin.hdr.Mode, bin.hdr.Uid, bin.hdr.Gid)
	}
	if l := files["manager"].hdr; l == nil || l.Typeflag != tar.TypeSymlink || l.Linkname != "/ray-operator" {
		t.Errorf("/manager: %+v, want a symlink to /ray-operator", l)
	}
	if h := files["home/nonroot/"].hdr; h == nil || h.Uid != NonRootUID || h.Gid != NonRootUID {
		t.Errorf("/home/nonroot: %+v, want owned by %d", h, NonRootUID)
	}
	checkStatic(t, bin.body, p)
}

func checkCACertificates(t *testing.T, f layerFile) {
	if f.hdr == nil || f.hdr.Mode != 0o644 {
		t.Fatalf("%s: %+v, want a file of mode 644", CACertificatesPath, f.hdr)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(f.body) {
		t.Fatalf("%s: no certificate parses", CACertificatesPath)
	}
	if n := bytes.Count(f.body, []byte("BEGIN CERTIFICATE")); n < 100 {
		t.Errorf("%s: %d certificates, want the Mozilla roots (over 100)", CACertificatesPath, n)
	}
}

// checkStatic checks the binary is an ELF executable of the platform with
// no program interpreter (statically linked) and, on a machine of that
// platform, that it reports the stamped version.
func checkStatic(t *testing.T, bin []byte, p v1.Platform) {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[p.Architecture]
	if f.Type != elf.ET_EXEC || f.Machine != machine {
		t.Errorf("binary: ELF type %s machine %s, want %s %s", f.Type, f.Machine, elf.ET_EXEC, machine)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			t.Errorf("binary has a %s program header: not static", prog.Type)
		}
	}
	if p.Architecture != runtime.GOARCH || runtime.GOOS != "linux" {
		return
	}
	path := filepath.Join(t.TempDir(), "ray-operator")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), path, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "ray-operator v9.8.7 ") {
		t.Errorf("--version: %q, want ray-operator v9.8.7 ...", out)
	}
}

// checkOutputs writes the layout and the docker tarball as `make image`
// does and reads them back.
func checkOutputs(t *testing.T, idx v1.ImageIndex) {
	dir := t.TempDir()
	ref, err := name.ParseReference("registry.example.com/ray-operator:v9.8.7")
	if err != nil {
		t.Fatal(err)
	}
	if err := writeLayout(filepath.Join(dir, "oci"), idx, ref); err != nil {
		t.Fatal(err)
	}
	read, err := readLayout(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	checkLayoutNames(t, filepath.Join(dir, "oci"))
	if a, b := digestOf(t, idx), digestOf(t, read); a != b {
		t.Errorf("layout: index %s, built %s", b, a)
	}
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	file := filepath.Join(dir, "image.tar")
	if err := writeTarball(file, idx, amd64, ref); err != nil {
		t.Fatal(err)
	}
	tag := ref.(name.Tag)
	loaded, err := tarball.ImageFromPath(file, &tag)
	if err != nil {
		t.Fatal(err)
	}
	built, err := platformImageOf(idx, amd64)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := built.ConfigName()
	b, err := loaded.ConfigName()
	if err != nil || a != b {
		t.Errorf("tarball %s: config %s (%v), want the linux/amd64 image's %s", tag, b, err, a)
	}
}

func checkLayoutNames(t *testing.T, dir string) {
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{refNameAnnotation: "v9.8.7", containerdNameAnnotation: "registry.example.com/ray-operator:v9.8.7"}
	if diff := cmp.Diff(want, m.Manifests[0].Annotations); diff != "" {
		t.Errorf("index.json names (-want +got):\n%s", diff)
	}
}
