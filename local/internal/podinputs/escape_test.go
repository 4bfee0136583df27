package podinputs

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

// The tests in this file play a pod that shares a volume with the node and
// swaps a directory for a symlink to the host while the node works on it.
// hostDir stands in for /etc: nothing in it may change, and no mount may
// show it.

// needRoot skips (or, in CI, fails) a test that chowns or mounts.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		capability.Missing(t, "chown and mount need root (CI runs as root)")
	}
}

// hostDir is a directory outside every volume with one root-owned file,
// "secret".
func hostDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// names lists the entries of dir, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// swapForLink renames dir aside and puts a symlink to target in its place.
func swapForLink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

// sharedPolicy is a node policy that shares one new directory, returned.
func sharedPolicy(t *testing.T) (PodFacts, string) {
	t.Helper()
	shared, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	policy, err := hostaccess.NewPolicy(false, []string{shared})
	if err != nil {
		t.Fatal(err)
	}
	facts := testFacts()
	facts.HostAccess = policy
	return facts, shared
}

// TestClaimOwnerShiftDoesNotFollowSwappedLinks: while the node gives a
// claim's files to the next pod, another pod on the claim keeps exchanging
// a directory of it with a symlink to the host. The host's file keeps its
// owner whatever the walk meets.
func TestClaimOwnerShiftDoesNotFollowSwappedLinks(t *testing.T) {
	needRoot(t)
	host := hostDir(t)
	w := newClaimWorld(t)
	pvDir := filepath.Join(w.volumeDir, "pv-1")
	dir, link := filepath.Join(pvDir, "d"), filepath.Join(pvDir, "link")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, link); err != nil {
		t.Fatal(err)
	}
	objs := newFakeObjects(clocktesting.NewFakeClock(testTime), w.claim, w.pv)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{volume("data", claimVolumeSource(false))}

	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := renameExchange(dir, link); err != nil {
				t.Error(err)
				return
			}
		}
	})
	defer swapper.Wait()
	defer close(stop)

	// Each pass gives the volume to another pod's range, so that every
	// pass walks it.
	const passes = 500
	for i := range passes {
		base := 1<<28 + (i%2)<<16
		w.facts.VolumeOwner = &Owner{UID: base, GID: base}
		v, err := Volumes(t.Context(), objs, pod, t.TempDir(), w.facts)
		if err != nil {
			t.Fatalf("pass %d: %v", i, err)
		}
		if err := v.Release(); err != nil {
			t.Fatal(err)
		}
		uid, gid, err := ownerOf(filepath.Join(host, "secret"))
		if err != nil {
			t.Fatal(err)
		}
		if uid != 0 || gid != 0 {
			t.Fatalf("pass %d: the host's file outside the volume was chowned to %d:%d", i, uid, gid)
		}
	}
}

// TestSubPathMountShowsWhatWasOpened: a sidecar swaps a subPath directory
// for a symlink to the host after the node resolved the subPath; the mount
// source still shows the directory that was resolved.
func TestSubPathMountShowsWhatWasOpened(t *testing.T) {
	needRoot(t)
	host := hostDir(t)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{volume("logs", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})}
	v, dir := setUpVolumes(t, newFakeObjects(nil), pod)
	sub := filepath.Join(dir, "logs", "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "inside"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &corev1.Container{Name: "main", VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/logs", SubPath: "sub"}}}
	mounts, err := Mounts(c, v)
	if err != nil {
		t.Fatal(err)
	}
	swapForLink(t, sub, host)
	if got := names(t, mounts[0].Source); !slices.Equal(got, []string{"inside"}) {
		t.Errorf("the subPath mount source shows %v, want [inside]: it follows the symlink swapped in after the check", got)
	}
}

// TestHostPathMountShowsWhatWasChecked: a pod sharing the host directory
// swaps a hostPath volume's directory for a symlink to the host after the
// node checked it; what the node mounts is still the checked directory.
func TestHostPathMountShowsWhatWasChecked(t *testing.T) {
	needRoot(t)
	host := hostDir(t)
	facts, shared := sharedPolicy(t)
	data := filepath.Join(shared, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "inside"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{volume("data", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
		Path: data, Type: ptr.To(corev1.HostPathDirectory)}})}
	v, err := Volumes(t.Context(), newFakeObjects(nil), pod, t.TempDir(), facts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := v.Release(); err != nil {
			t.Error(err)
		}
	})
	swapForLink(t, data, host)
	mounts, err := Mounts(&corev1.Container{Name: "main", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}, v)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, mounts[0].Source); !slices.Equal(got, []string{"inside"}) {
		t.Errorf("the hostPath mount source shows %v, want [inside]: it follows the symlink swapped in after the check", got)
	}
}

// TestHostPathOrCreateDoesNotFollowLinks: after the node admitted a pod
// whose hostPath volume does not exist yet, another pod sharing the
// directory puts a symlink to the host where it will be created. The node
// creates nothing outside the shared directory and refuses the volume.
func TestHostPathOrCreateDoesNotFollowLinks(t *testing.T) {
	needRoot(t)
	cases := map[string]struct {
		typ  corev1.HostPathType
		path string // below the shared directory; "out" links to the host
	}{
		"DirectoryOrCreate through a dangling link":     {typ: corev1.HostPathDirectoryOrCreate, path: "dangling"},
		"DirectoryOrCreate below a link to a directory": {typ: corev1.HostPathDirectoryOrCreate, path: "out/new/deeper"},
		"FileOrCreate through a dangling link":          {typ: corev1.HostPathFileOrCreate, path: "dangling"},
		"FileOrCreate below a link to a directory":      {typ: corev1.HostPathFileOrCreate, path: "out/new"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			host := hostDir(t)
			facts, shared := sharedPolicy(t)
			pod := testPod()
			pod.Spec.Volumes = []corev1.Volume{volume("v", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: filepath.Join(shared, tc.path), Type: ptr.To(tc.typ)}})}
			if v := facts.HostAccess.Admit(pod); !v.Admitted() {
				t.Fatalf("the pod is refused before the link exists: %s", v.Message)
			}
			if err := os.Symlink(host, filepath.Join(shared, "out")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(host, "new"), filepath.Join(shared, "dangling")); err != nil {
				t.Fatal(err)
			}
			v, err := Volumes(t.Context(), newFakeObjects(nil), pod, t.TempDir(), facts)
			if err == nil {
				if rerr := v.Release(); rerr != nil {
					t.Error(rerr)
				}
			}
			if got := names(t, host); !slices.Equal(got, []string{"secret"}) {
				t.Errorf("the host directory holds %v after setting up the volume, want only [secret]", got)
			}
			if err == nil {
				t.Errorf("Volumes set up a volume that leads out of the shared directory")
			}
		})
	}
}

// renameExchange swaps two names atomically, as a pod can.
func renameExchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
