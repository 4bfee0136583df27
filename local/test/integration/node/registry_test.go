package node_test

import (
	"archive/tar"
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// registryProbe is the entrypoint of the test's image: a static program
// that prints what proves the image config was honoured.
const registryProbe = `package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	wd, _ := os.Getwd()
	groups, _ := os.Getgroups()
	fmt.Printf("id=%d:%d\ngroups=%v\nwd=%s\ngreeting=%s\nargs=%q\n", os.Getuid(), os.Getgid(), groups, wd, os.Getenv("GREETING"), os.Args)
	var st syscall.Stat_t
	if err := syscall.Stat("/srv/owned", &st); err == nil {
		fmt.Printf("owner=%d:%d\n", st.Uid, st.Gid)
	}
	data, err := os.ReadFile("/srv/owned")
	fmt.Printf("content=%s%v\n", data, err)
	_, err = os.Stat("/usr/bin")
	fmt.Printf("hostusr=%v\n", err == nil)
}
`

// registryImage builds the test's image: /etc/passwd and /etc/group naming
// user app (1234, group app 2000, member of staff 50), /srv/owned readable
// by app only, the probe as ENTRYPOINT, USER app, WORKDIR /srv.
func registryImage(t *testing.T) v1.Image {
	t.Helper()
	src := t.TempDir()
	for name, data := range map[string]string{"go.mod": "module probe\n\ngo 1.26\n", "main.go": registryProbe} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "probe")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Env = src, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the probe: %v\n%s", err, out)
	}
	probe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		name, body string
		dir        bool
		mode       int64
		uid, gid   int
	}
	layer := func(entries ...entry) v1.Layer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, e := range entries {
			hdr := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, Size: int64(len(e.body)), Typeflag: tar.TypeReg, ModTime: time.Unix(1700000000, 0)}
			if e.dir {
				hdr.Typeflag, hdr.Size = tar.TypeDir, 0
			}
			if err := tw.WriteHeader(hdr); err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	img, err := mutate.AppendLayers(empty.Image,
		layer(entry{name: "etc/", dir: true, mode: 0o755},
			entry{name: "etc/passwd", body: "root:x:0:0::/root:/bin/sh\napp:x:1234:2000::/srv:/bin/sh\n", mode: 0o644},
			entry{name: "etc/group", body: "root:x:0:\nstaff:x:50:app\napp:x:2000:\n", mode: 0o644},
			entry{name: "srv/", dir: true, mode: 0o750, uid: 1234, gid: 2000},
			entry{name: "srv/owned", body: "secret", mode: 0o600, uid: 1234, gid: 2000}),
		layer(entry{name: "bin/", dir: true, mode: 0o755}, entry{name: "bin/probe", body: string(probe), mode: 0o755}))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config = v1.Config{Entrypoint: []string{"/bin/probe"}, Cmd: []string{"from-cmd"}, Env: []string{"PATH=/bin", "GREETING=hello"}, WorkingDir: "/srv", User: "app"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// privateRegistry serves an in-process registry on the host's loopback,
// which the node pulls from; repositories under private/ need user:pass.
func privateRegistry(t *testing.T) string {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v2/private/") {
			if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "pass" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func registryPod(name, image string, secrets ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			Containers:                    []corev1.Container{{Name: "main", Image: image, Args: []string{"from-args"}}},
			TerminationGracePeriodSeconds: ptr.To[int64](5),
		},
	}
	for _, s := range secrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	return pod
}

func testRegistryImages(t *testing.T, c *cluster) {
	host := privateRegistry(t)
	img := registryImage(t)
	for _, ref := range []string{host + "/app:v1", host + "/private/app:v1"} {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(r, img, remote.WithAuth(&authn.Basic{Username: "user", Password: "pass"})); err != nil {
			t.Fatal(err)
		}
	}
	// An image only the private repository has, which no pod pulled with
	// credentials first (an image in the node's store runs for any pod
	// with IfNotPresent, as on a kubelet without
	// KubeletEnsureSecretPulledImages).
	other, err := mutate.Config(img, v1.Config{Entrypoint: []string{"/bin/probe"}, Env: []string{"OTHER=1"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(host + "/private/other:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, other, remote.WithAuth(&authn.Basic{Username: "user", Password: "pass"})); err != nil {
		t.Fatal(err)
	}
	config := `{"auths":{"` + host + `":{"username":"user","password":"pass"}}}`
	_, err = c.cs.CoreV1().Secrets(namespace).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry-creds", Namespace: namespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(config)},
	}, metav1.CreateOptions{})
	mustCreate(t, err)

	want := map[string]string{
		"id": "1234:2000", "groups": "[50]", "wd": "/srv", "greeting": "hello", "args": `["/bin/probe" "from-args"]`,
		"owner": "1234:2000", "content": "secret<nil>", "hostusr": "false",
	}
	succeeded := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded }
	for _, tc := range []struct{ pod, image, secret string }{
		{"registry-anonymous", host + "/app:v1", ""},
		{"registry-secret", host + "/private/app:v1", "registry-creds"},
	} {
		var secrets []string
		if tc.secret != "" {
			secrets = append(secrets, tc.secret)
		}
		began := time.Now()
		createAndWait(t, c, registryPod(tc.pod, tc.image, secrets...), "Succeeded", succeeded)
		t.Logf("%s: created to Succeeded in %s", tc.pod, time.Since(began).Round(time.Millisecond))
		if diff := cmp.Diff(want, parseLines(kubeletLogs(t, c, tc.pod, "main"))); diff != "" {
			t.Errorf("%s: what the container printed (-want +got):\n%s", tc.pod, diff)
		}
		t.Logf("%s: %s", tc.pod, podEvent(t, c, tc.pod, "Pulled"))
	}

	wrong := strings.Repeat("0", 64)
	for _, tc := range []struct{ pod, image, want string }{
		{"registry-wrong-digest", host + "/app@sha256:" + wrong, "not found"},
		{"registry-unauthorised", host + "/private/other:v1", "unauthorized"},
	} {
		got := createAndWait(t, c, registryPod(tc.pod, tc.image), "ErrImagePull", func(p *corev1.Pod) bool {
			w := mainWaiting(p)
			return w != nil && w.Reason == "ErrImagePull"
		})
		msg := mainWaiting(got).Message
		if !strings.Contains(msg, tc.image) || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: ErrImagePull %q; want it to name %s and say %q", tc.pod, msg, tc.image, tc.want)
		}
		t.Logf("%s: %s", tc.pod, msg)
		waitPod(t, c, tc.pod, "ImagePullBackOff", func(p *corev1.Pod) bool {
			w := mainWaiting(p)
			return w != nil && w.Reason == "ImagePullBackOff"
		})
	}
	deleteAndWait(t, c, "registry-anonymous", "registry-secret", "registry-wrong-digest", "registry-unauthorised")
}

// mainWaiting is the first container's waiting state, nil when it does not
// wait.
func mainWaiting(p *corev1.Pod) *corev1.ContainerStateWaiting {
	if len(p.Status.ContainerStatuses) == 0 {
		return nil
	}
	return p.Status.ContainerStatuses[0].State.Waiting
}
