package podinputs

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/rayvenv"
)

// pinnedOnly is a node with the pinned Ray 2.60.0 in dir and no installer.
func pinnedOnly(dir string) RayImages {
	return RayImages{Pinned: rayvenv.Venv{Dir: dir, Version: "2.60.0", Python: "3.11"}}
}

// fakeInstaller installs a release into /cache/ray-venv-<release>, or fails
// with err.
type fakeInstaller struct {
	err      error
	installs []string
}

func (f *fakeInstaller) Install(_ context.Context, version string) (rayvenv.Venv, error) {
	f.installs = append(f.installs, version)
	if f.err != nil {
		return rayvenv.Venv{}, f.err
	}
	return rayvenv.Venv{Dir: "/cache/ray-venv-" + version, Version: version, Python: "3.11"}, nil
}

func TestResolve(t *testing.T) {
	ray := RayImages{Pinned: rayvenv.Venv{Dir: "/cache/ray-venv-2.60.0", Version: "2.60.0", Python: "3.11"}, Installer: &fakeInstaller{}}
	table := DefaultImages(ray, "/usr/bin/redis-server")
	rayImage := func(ref, release, local, venv string) Image {
		return Image{
			Ref:        ref,
			Local:      local,
			Cmd:        []string{"/bin/bash"},
			Env:        []string{"PATH=/home/ray/anaconda3/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "VIRTUAL_ENV=/home/ray/anaconda3", "HOME=/home/ray", "LANG=C.UTF-8"},
			WorkingDir: "/home/ray",
			Mounts:     []ImageMount{{Source: venv, Destination: "/home/ray/anaconda3"}},
			RayRelease: release,
		}
	}
	pinned := func(ref string) Image {
		return rayImage(ref, "", "Ray 2.60.0 virtualenv /cache/ray-venv-2.60.0 at /home/ray/anaconda3", "/cache/ray-venv-2.60.0")
	}
	toInstall := func(ref, release string) Image {
		return rayImage(ref, release, "Ray "+release+" virtualenv, not installed yet", "")
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
	noLocal := func(ref string) string {
		return `image "` + ref + `" has no local equivalent (local images: rayproject/ray*, redis*; see docs/local.md)`
	}
	cases := []struct {
		ref     string
		want    Image
		wantErr string
	}{
		{ref: "rayproject/ray:2.60.0", want: pinned("rayproject/ray:2.60.0")},
		{ref: "rayproject/ray:2.60.0-py311-cpu", want: pinned("rayproject/ray:2.60.0-py311-cpu")},
		{ref: "rayproject/ray-ml:2.60.0-gpu", want: pinned("rayproject/ray-ml:2.60.0-gpu")},
		{ref: "rayproject/ray", want: pinned("rayproject/ray")},
		{ref: "rayproject/ray:latest", want: pinned("rayproject/ray:latest")},
		{ref: "rayproject/ray:nightly-py311-aarch64", want: pinned("rayproject/ray:nightly-py311-aarch64")},
		{ref: "quay.io/foo/ray:nightly", want: pinned("quay.io/foo/ray:nightly")},
		{ref: "localhost:5000/team/ray@" + digest, want: pinned("localhost:5000/team/ray@" + digest)},
		// A user's build: its tag says nothing of the Ray inside.
		{ref: "us-docker.pkg.dev/proj/repo/ray-custom:1.0", want: pinned("us-docker.pkg.dev/proj/repo/ray-custom:1.0")},
		{ref: "rayproject/ray:2.46.0", want: toInstall("rayproject/ray:2.46.0", "2.46.0")},
		{ref: "rayproject/ray:2.52.0-py311-cpu", want: toInstall("rayproject/ray:2.52.0-py311-cpu", "2.52.0")},
		{ref: "rayproject/ray:2.41.0-aarch64", want: toInstall("rayproject/ray:2.41.0-aarch64", "2.41.0")},
		{ref: "rayproject/ray:2.41.0-py311-gpu-aarch64", want: toInstall("rayproject/ray:2.41.0-py311-gpu-aarch64", "2.41.0")},
		{ref: "rayproject/ray:2.52.0-cu121", want: toInstall("rayproject/ray:2.52.0-cu121", "2.52.0")},
		{ref: "rayproject/ray-ml:2.9.3-gpu", want: toInstall("rayproject/ray-ml:2.9.3-gpu", "2.9.3")},
		{ref: "rayproject/ray-llm:2.44.0", want: toInstall("rayproject/ray-llm:2.44.0", "2.44.0")},
		{ref: "rayproject/ray:2.999.0", want: toInstall("rayproject/ray:2.999.0", "2.999.0")},
		{ref: "docker.io/rayproject/ray:2.46.0-py310", wantErr: `tag "2.46.0-py310" asks for Python 3.10, but this node's Ray virtualenvs run Python 3.11 (the system's python3; tags with -py311 or no -py run)`},
		{ref: "anyscale/ray:2.40.0-slim-py312-cu125", wantErr: `tag "2.40.0-slim-py312-cu125" asks for Python 3.12, but this node's Ray virtualenvs run Python 3.11 (the system's python3; tags with -py311 or no -py run)`},
		{ref: "rayproject/ray:2.46", wantErr: `tag "2.46" names no Ray release: a Ray image tag is X.Y.Z, latest or nightly, then -pyNNN, -cpu, -gpu, -cuNNN or -aarch64`},
		{ref: "rayproject/ray:2.46.0-tpu", wantErr: `tag "2.46.0-tpu": "tpu" is no Ray image variant (-pyNNN, -cpu, -gpu, -cuNNN, -aarch64, -slim, -extra)`},
		{ref: "redis:7", want: redis("redis:7")},
		{ref: "redis", want: redis("redis")},
		{ref: "docker.io/library/redis:7.2-alpine", want: redis("docker.io/library/redis:7.2-alpine")},
		{ref: "bitnami/redis@" + digest, want: redis("bitnami/redis@" + digest)},
		{ref: "redis/redis-stack-server:7.2.0-v10", want: redis("redis/redis-stack-server:7.2.0-v10")},
		{ref: "nginx", wantErr: noLocal("nginx")},
		{ref: "busybox:1.36", wantErr: noLocal("busybox:1.36")},
		{ref: "rayproject/raylet", wantErr: noLocal("rayproject/raylet")},
		{ref: "ray/busybox", wantErr: noLocal("ray/busybox")},
		// The operator's own image is no Ray image, even at tag latest.
		{ref: "ghcr.io/ray-operator/ray-operator:latest", wantErr: noLocal("ghcr.io/ray-operator/ray-operator:latest")},
		{ref: "127.0.0.1:5001/ray-operator:dev", wantErr: noLocal("127.0.0.1:5001/ray-operator:dev")},
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

func TestResolveWithoutInstallerRunsPinned(t *testing.T) {
	img, err := DefaultImages(pinnedOnly("/venv"), "/usr/bin/redis-server").Resolve("rayproject/ray:2.41.0")
	if err != nil {
		t.Fatal(err)
	}
	want := "Ray 2.60.0 virtualenv /venv at /home/ray/anaconda3, for Ray 2.41.0: this node installs no other release"
	if img.Local != want || img.RayRelease != "" || img.Mounts[0].Source != "/venv" {
		t.Errorf("Resolve = Local %q, RayRelease %q, mounts %v; want Local %q, present, /venv mounted", img.Local, img.RayRelease, img.Mounts, want)
	}
}

func TestPullInstallsOnceThenPresent(t *testing.T) {
	inst := &fakeInstaller{}
	table := DefaultImages(RayImages{Pinned: rayvenv.Venv{Dir: "/venv", Version: "2.60.0", Python: "3.11"}, Installer: inst}, "/usr/bin/redis-server")
	img, err := table.Resolve("rayproject/ray:2.41.0-py311")
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := table.Pull(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	if pulled.RayRelease != "" || pulled.Mounts[0].Source != "/cache/ray-venv-2.41.0" || pulled.Local != "Ray 2.41.0 virtualenv /cache/ray-venv-2.41.0 at /home/ray/anaconda3" {
		t.Errorf("Pull = %+v, want the 2.41.0 virtualenv mounted", pulled)
	}
	// Another pod of the release finds it present.
	again, err := table.Resolve("rayproject/ray-ml:2.41.0-gpu")
	if err != nil {
		t.Fatal(err)
	}
	if again.RayRelease != "" || again.Mounts[0].Source != "/cache/ray-venv-2.41.0" {
		t.Errorf("second Resolve = %+v, want present", again)
	}
	if diff := cmp.Diff([]string{"2.41.0"}, inst.installs); diff != "" {
		t.Errorf("installs (-want +got):\n%s", diff)
	}
}

func TestPullFailureIsTheInstallers(t *testing.T) {
	inst := &fakeInstaller{err: errors.New("installing ray[default,serve]==2.999.0: No matching distribution found for ray[default,serve]==2.999.0")}
	table := DefaultImages(RayImages{Pinned: rayvenv.Venv{Dir: "/venv", Version: "2.60.0", Python: "3.11"}, Installer: inst}, "/usr/bin/redis-server")
	img, err := table.Resolve("rayproject/ray:2.999.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := table.Pull(t.Context(), img); err == nil || err.Error() != inst.err.Error() {
		t.Errorf("Pull error = %v, want %v", err, inst.err)
	}
	if again, _ := table.Resolve("rayproject/ray:2.999.0"); again.RayRelease != "2.999.0" {
		t.Errorf("after a failed pull, Resolve = %+v, want still to install", again)
	}
}

func TestResolveErrorTypes(t *testing.T) {
	table := DefaultImages(pinnedOnly("/venv"), "/opt/redis/bin/redis-server")
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
	table := DefaultImages(pinnedOnly("/venv"), "/usr/bin/redis-server")
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
	for _, r := range DefaultImages(pinnedOnly("/venv"), "/usr/bin/redis-server").Rules() {
		got = append(got, r.Pattern+" → "+r.Image.Local)
	}
	want := []string{"rayproject/ray* → Ray 2.60.0 virtualenv /venv at /home/ray/anaconda3", "redis* → redis-server /usr/bin/redis-server"}
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
	table := DefaultImages(pinnedOnly("/venv"), "/bin/echo")
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
