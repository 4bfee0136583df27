package main

import (
	"bytes"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/imagestore"
)

func TestParseLoad(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want loadRequest
		err  string
	}{
		{args: []string{"image-archive", "a.tar"}, want: loadRequest{archive: "a.tar"}},
		{args: []string{"image-archive", "--name", "x:1", "a.tar", "--name=y:2", "--state-dir", "/s"}, want: loadRequest{archive: "a.tar", names: names{"x:1", "y:2"}, stateDir: "/s"}},
		{args: nil, err: "want `load image-archive FILE`"},
		{args: []string{"docker-image", "a"}, err: "want `load image-archive FILE`"},
		{args: []string{"image-archive"}, err: "want one archive, got 0"},
		{args: []string{"image-archive", "a.tar", "b.tar"}, err: "want one archive, got 2"},
		{args: []string{"image-archive", "--nme", "x", "a.tar"}, err: "flag provided but not defined"},
	} {
		got, err := parseLoad(tc.args, io.Discard)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseLoad(%q): %v; want an error saying %q", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("parseLoad(%q): %v", tc.args, err)
		case tc.err == "" && (got.archive != tc.want.archive || got.stateDir != tc.want.stateDir || strings.Join(got.names, ",") != strings.Join(tc.want.names, ",")):
			t.Errorf("parseLoad(%q) = %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// The command loads into the image store of the state directory the node
// uses, and refuses a state directory without one.
func TestRunLoad(t *testing.T) {
	state := t.TempDir()
	archive := filepath.Join(t.TempDir(), "image.tar")
	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	if err := tarball.WriteToFile(archive, name.MustParseReference("fluent/fluent-bit:3.2.2"), img); err != nil {
		t.Fatal(err)
	}
	err = runLoad([]string{"image-archive", archive, "--state-dir", state}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "start the local cluster once") {
		t.Fatalf("load without a node's store: %v; want it refused", err)
	}
	store, err := imagestore.Open(localcluster.ImageStoreDir(state), imagestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runLoad([]string{"image-archive", "--state-dir", state, archive}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "loaded index.docker.io/fluent/fluent-bit:3.2.2") {
		t.Errorf("output %q; want it to name what it loaded", out.String())
	}
	got, ok, err := store.Present("fluent/fluent-bit:3.2.2")
	want, _ := img.Digest()
	if err != nil || !ok || got.Digest != want {
		t.Errorf("the node's store has %v, %v, %v; want %s", got.Digest, ok, err, want)
	}
}
