package node_test

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/imagestore"
)

// archiveFiller is the size of the incompressible file the archived image
// carries besides the probe, so that the load's time is that of an image
// of tens of MB.
const archiveFiller = 32 << 20

// archivedImage is the registry test's image with a layer of random bytes.
func archivedImage(t *testing.T) v1.Image {
	t.Helper()
	filler := make([]byte, archiveFiller)
	if _, err := rand.Read(filler); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "filler", Mode: 0o644, Size: int64(len(filler)), Typeflag: tar.TypeReg, ModTime: time.Unix(1700000000, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(filler); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(registryImage(t), l)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// writeDockerArchive writes img as a `docker save` tarball tagged ref.
func writeDockerArchive(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.WriteToFile(p, tag, img); err != nil {
		t.Fatal(err)
	}
	return p
}

// corruptLayer rewrites the archive at p with the middle of its largest
// entry (the filler layer) reversed.
func corruptLayer(t *testing.T, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tr, tw := tar.NewReader(bytes.NewReader(data)), tar.NewWriter(&out)
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
		if len(body) > archiveFiller/2 {
			for i, j := len(body)/4, 3*len(body)/4; i < j; i, j = i+1, j-1 {
				body[i], body[j] = body[j], body[i]
			}
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
}

// loadArchive loads the archive at p into the node's store as `ray-local
// load image-archive` does: from a store of its own over the node's
// directory (another process's, there).
func loadArchive(t *testing.T, c *cluster, p string) ([]imagestore.Image, error) {
	t.Helper()
	guest, err := imagestore.Open(c.images, imagestore.Options{Guest: true})
	if err != nil {
		t.Fatal(err)
	}
	return guest.Load(p, nil)
}

func storedImages(t *testing.T, c *cluster) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(c.images, "images"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// testImageArchive loads archives into the node's store while the node
// runs, as `ray-local load image-archive` does beside `make run`.
func testImageArchive(t *testing.T, c *cluster) {
	// A Docker Hub name: no registry here serves it, as fluent-bit's in
	// KubeRay's samples.
	const ref = "ray-operator-test/archived:v1"
	img := archivedImage(t)
	archive := writeDockerArchive(t, ref, img)
	if info, err := os.Stat(archive); err == nil {
		t.Logf("archive: %d MB", info.Size()>>20)
	}
	began := time.Now()
	loaded, err := loadArchive(t, c, archive)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %s (%d MB unpacked) in %s", loaded[0].Ref, loaded[0].Size>>20, time.Since(began).Round(time.Millisecond))
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]string{
		"id": "1234:2000", "groups": "[50]", "wd": "/srv", "greeting": "hello", "args": `["/bin/probe" "from-args"]`,
		"owner": "1234:2000", "content": "secret<nil>", "hostusr": "false",
	}
	succeeded := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded }
	for _, tc := range []struct {
		pod    string
		policy corev1.PullPolicy
	}{{"archive-ifnotpresent", corev1.PullIfNotPresent}, {"archive-never", corev1.PullNever}} {
		pod := registryPod(tc.pod, ref)
		pod.Spec.Containers[0].ImagePullPolicy = tc.policy
		got := createAndWait(t, c, pod, "Succeeded", succeeded)
		if diff := cmp.Diff(want, parseLines(kubeletLogs(t, c, tc.pod, "main"))); diff != "" {
			t.Errorf("%s: what the container printed (-want +got):\n%s", tc.pod, diff)
		}
		if id := got.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(id, "@"+digest.String()) {
			t.Errorf("%s: imageID %q; want the archive's image %s", tc.pod, id, digest)
		}
	}

	// Always asks the image's registry (Docker Hub), as a kubelet does for
	// a preloaded image.
	always := registryPod("archive-always", ref)
	always.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
	got := createAndWait(t, c, always, "ErrImagePull", func(p *corev1.Pod) bool {
		w := mainWaiting(p)
		return w != nil && w.Reason == "ErrImagePull"
	})
	t.Logf("archive-always: %s", mainWaiting(got).Message)

	const corruptRef = "ray-operator-test/corrupt:v1"
	other, err := mutate.Config(img, v1.Config{Entrypoint: []string{"/bin/probe"}, Env: []string{"OTHER=1"}})
	if err != nil {
		t.Fatal(err)
	}
	corrupt := writeDockerArchive(t, corruptRef, other)
	corruptLayer(t, corrupt)
	before := storedImages(t, c)
	if _, err := loadArchive(t, c, corrupt); err == nil || !strings.Contains(err.Error(), "corrupt layer") && !strings.Contains(err.Error(), "digest mismatch") {
		t.Fatalf("loading a corrupt archive: %v; want it refused", err)
	} else {
		t.Logf("corrupt archive: %v", err)
	}
	if after := storedImages(t, c); !cmp.Equal(before, after) {
		t.Errorf("the store held %v before the corrupt load, %v after", before, after)
	}
	never := registryPod("archive-corrupt-never", corruptRef)
	never.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	createAndWait(t, c, never, "ErrImageNeverPull", func(p *corev1.Pod) bool {
		w := mainWaiting(p)
		return w != nil && w.Reason == "ErrImageNeverPull"
	})

	// The sound archive, loaded while that pod waits: the node finds the
	// image when it looks again after the image back-off.
	if _, err := loadArchive(t, c, writeDockerArchive(t, corruptRef, other)); err != nil {
		t.Fatal(err)
	}
	otherDigest, err := other.Digest()
	if err != nil {
		t.Fatal(err)
	}
	got = waitPod(t, c, never.Name, "Succeeded", succeeded)
	if id := got.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(id, "@"+otherDigest.String()) {
		t.Errorf("%s: imageID %q; want the loaded image %s", never.Name, id, otherDigest)
	}
	deleteAndWait(t, c, "archive-ifnotpresent", "archive-never", "archive-always", "archive-corrupt-never")
}
