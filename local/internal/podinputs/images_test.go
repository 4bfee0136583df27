package podinputs

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestResolve(t *testing.T) {
	table := DefaultImages("/cache/ray-venv-2.60.0", "/usr/bin/redis-server")
	ray := func(ref string) Image {
		return Image{
			Ref:        ref,
			Local:      "Ray virtualenv /cache/ray-venv-2.60.0 at /home/ray/anaconda3",
			Cmd:        []string{"/bin/bash"},
			Env:        []string{"PATH=/home/ray/anaconda3/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "VIRTUAL_ENV=/home/ray/anaconda3", "HOME=/home/ray", "LANG=C.UTF-8"},
			WorkingDir: "/home/ray",
			Mounts:     []ImageMount{{Source: "/cache/ray-venv-2.60.0", Destination: "/home/ray/anaconda3"}},
		}
	}
	redis := func(ref string) Image {
		return Image{
			Ref:        ref,
			Local:      "redis-server /usr/bin/redis-server",
			Entrypoint: []string{"/bin/sh", "-c", `case "$1" in -*|*.conf) set -- '/usr/bin/redis-server' "$@" ;; esac; exec "$@"`, "docker-entrypoint.sh"},
			Cmd:        []string{"/usr/bin/redis-server"},
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			WorkingDir: "/data",
		}
	}
	const digest = "sha256:7f2a4e8cd2de2a3d6cce0b0f3c7ed5e4b1a2e0ac5ba3c0c5ff1b1dd06a4d1f0a"
	cases := []struct {
		ref     string
		want    Image
		wantErr string
	}{
		{ref: "rayproject/ray:2.46.0", want: ray("rayproject/ray:2.46.0")},
		{ref: "docker.io/rayproject/ray:2.46.0-py310", want: ray("docker.io/rayproject/ray:2.46.0-py310")},
		{ref: "rayproject/ray-ml:2.9.0-gpu", want: ray("rayproject/ray-ml:2.9.0-gpu")},
		{ref: "rayproject/ray-llm:2.44.0", want: ray("rayproject/ray-llm:2.44.0")},
		{ref: "rayproject/ray", want: ray("rayproject/ray")},
		{ref: "anyscale/ray:2.40.0-slim-py312-cu125", want: ray("anyscale/ray:2.40.0-slim-py312-cu125")},
		{ref: "quay.io/foo/ray:nightly", want: ray("quay.io/foo/ray:nightly")},
		{ref: "localhost:5000/team/ray@" + digest, want: ray("localhost:5000/team/ray@" + digest)},
		{ref: "us-docker.pkg.dev/proj/repo/ray-custom:1.0", want: ray("us-docker.pkg.dev/proj/repo/ray-custom:1.0")},
		{ref: "redis:7", want: redis("redis:7")},
		{ref: "redis", want: redis("redis")},
		{ref: "docker.io/library/redis:7.2-alpine", want: redis("docker.io/library/redis:7.2-alpine")},
		{ref: "bitnami/redis@" + digest, want: redis("bitnami/redis@" + digest)},
		{ref: "redis/redis-stack-server:7.2.0-v10", want: redis("redis/redis-stack-server:7.2.0-v10")},
		{ref: "nginx", wantErr: `image "nginx" has no local equivalent (local images: rayproject/ray*, redis*; see docs/local.md)`},
		{ref: "busybox:1.36", wantErr: `image "busybox:1.36" has no local equivalent (local images: rayproject/ray*, redis*; see docs/local.md)`},
		{ref: "rayproject/raylet", wantErr: `image "rayproject/raylet" has no local equivalent (local images: rayproject/ray*, redis*; see docs/local.md)`},
		{ref: "ray/busybox", wantErr: `image "ray/busybox" has no local equivalent (local images: rayproject/ray*, redis*; see docs/local.md)`},
		{ref: "Ray:latest", wantErr: `Failed to apply default image tag "Ray:latest": couldn't parse image name "Ray:latest": invalid reference format: repository name (library/Ray) must be lowercase`},
	}
	for _, tc := range cases {
		t.Run(tc.ref, func(t *testing.T) {
			got, err := table.Resolve(tc.ref)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Resolve(%q) error = %v, want %q", tc.ref, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.ref, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve(%q) (-want +got):\n%s", tc.ref, diff)
			}
		})
	}
}

func TestResolveErrorTypes(t *testing.T) {
	table := DefaultImages("/venv", "/opt/redis/bin/redis-server")
	_, err := table.Resolve("nginx:1.27")
	var nl *NoLocalImageError
	if !errors.As(err, &nl) || nl.Ref != "nginx:1.27" {
		t.Errorf("Resolve(nginx) error = %#v, want *NoLocalImageError for nginx:1.27", err)
	}
	_, err = table.Resolve("repo/UPPER")
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Reason != ReasonInvalidImageName {
		t.Errorf("Resolve(repo/UPPER) error = %#v, want *ConfigError with reason %s", err, ReasonInvalidImageName)
	}
	// A redis-server outside the system directories appears where the
	// redis image keeps its own.
	img, err := table.Resolve("redis:7")
	if err != nil {
		t.Fatal(err)
	}
	want := []ImageMount{{Source: "/opt/redis/bin/redis-server", Destination: "/usr/local/bin/redis-server"}}
	if diff := cmp.Diff(want, img.Mounts); diff != "" {
		t.Errorf("redis image Mounts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/usr/local/bin/redis-server"}, img.Cmd); diff != "" {
		t.Errorf("redis image Cmd (-want +got):\n%s", diff)
	}
}

func TestResolveReturnsCopies(t *testing.T) {
	table := DefaultImages("/venv", "/usr/bin/redis-server")
	a, _ := table.Resolve("rayproject/ray")
	a.Env[0] = "PATH=changed"
	a.Cmd[0] = "changed"
	b, _ := table.Resolve("rayproject/ray")
	if b.Env[0] == "PATH=changed" || b.Cmd[0] == "changed" {
		t.Errorf("a caller's change to a resolved Image leaked into the table: %+v", b)
	}
}

func TestRules(t *testing.T) {
	var got []string
	for _, r := range DefaultImages("/venv", "/usr/bin/redis-server").Rules() {
		got = append(got, r.Pattern+" → "+r.Image.Local)
	}
	want := []string{"rayproject/ray* → Ray virtualenv /venv at /home/ray/anaconda3", "redis* → redis-server /usr/bin/redis-server"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Rules (-want +got):\n%s", diff)
	}
}

// TestRedisEntrypointRunsServerForOptions runs the argv of Redis containers
// (with echo standing in for redis-server): args that start with an option
// or a .conf file are the server's, as with the redis image's entrypoint
// (`args: ["--requirepass", ...]` alone starts a server); other args run as
// a command; neither runs the server alone.
func TestRedisEntrypointRunsServerForOptions(t *testing.T) {
	table := DefaultImages("/venv", "/bin/echo")
	img, err := table.Resolve("redis:7.4")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		container corev1.Container
		want      string
	}{
		"options":     {container: corev1.Container{Args: []string{"--requirepass", "$(PW)"}}, want: "--requirepass s3cret"},
		"conf file":   {container: corev1.Container{Args: []string{"/etc/redis.conf", "--port", "7000"}}, want: "/etc/redis.conf --port 7000"},
		"a command":   {container: corev1.Container{Args: []string{"/bin/echo", "it's", "direct"}}, want: "it's direct"},
		"image's CMD": {container: corev1.Container{}, want: ""},
		"command set": {container: corev1.Container{Command: []string{"/bin/echo"}, Args: []string{"--own"}}, want: "--own"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			argv, err := Argv(img, &tc.container, []string{"PW=s3cret"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.CommandContext(t.Context(), argv[0], argv[1:]...).Output()
			if err != nil {
				t.Fatalf("running %q: %v", argv, err)
			}
			if got := strings.TrimSuffix(string(out), "\n"); got != tc.want {
				t.Errorf("%q printed %q, want %q", argv, got, tc.want)
			}
		})
	}
}
