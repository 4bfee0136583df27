package node

import (
	"archive/tar"
	"bytes"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/imagestore"
	"github.com/ray-operator/ray-operator/local/internal/podinputs"
)

func TestExplicitRegistry(t *testing.T) {
	for ref, want := range map[string]bool{
		"redis:7":                         false,
		"rayproject/ray:2.52.0":           false,
		"docker.io/rayproject/ray:2.52.0": false,
		"index.docker.io/library/redis":   false,
		"127.0.0.1:5000/redis:7":          true,
		"localhost/redis":                 true,
		"registry.example/team/ray:2.9":   true,
	} {
		if got := explicitRegistry(ref); got != want {
			t.Errorf("explicitRegistry(%s) = %v, want %v", ref, got, want)
		}
	}
}

// serveRedis starts an in-process registry holding <host>/redis:7 and
// returns its host.
func serveRedis(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "served", Typeflag: tar.TypeReg, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.Config(img, v1.Config{Cmd: []string{"/served"}}); err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(host + "/redis:7")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	return host
}

func TestMappedImageFromAnExplicitRegistry(t *testing.T) {
	host := serveRedis(t)
	store, err := imagestore.Open(t.TempDir(), imagestore.Options{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	in := localInputs{images: podinputs.DefaultImages(podinputs.RayImages{}, "/usr/bin/redis-server"), store: store}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	tests := map[string]struct {
		ref string
		// wantRegistry: the registry's image runs, else the local redis.
		wantRegistry bool
	}{
		"served by the registry it names": {ref: host + "/redis:7", wantRegistry: true},
		"not served there: the local one": {ref: host + "/redis:8"},
		"its registry unreachable":        {ref: closed + "/redis:7"},
		"no registry named":               {ref: "redis:7"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			img, err := in.Image(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if img.Registry {
				if img, err = in.Pull(t.Context(), &corev1.Pod{}, img); err != nil {
					t.Fatal(err)
				}
			}
			if tc.wantRegistry {
				if img.RootFS == "" || !strings.HasPrefix(img.ID, host+"/redis@sha256:") || img.Cmd[0] != "/served" {
					t.Errorf("image %+v; want the registry's, unpacked", img)
				}
				return
			}
			if img.RootFS != "" || img.Local != "redis-server /usr/bin/redis-server" || img.ID != "local://"+tc.ref {
				t.Errorf("image %+v (ID %s); want the local redis-server", img.Image, img.ID)
			}
		})
	}
}
