package podinputs

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

// tmpfsMounts returns the tmpfs mount points below dir with their options
// (from /proc/self/mountinfo).
func tmpfsMounts(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		fields := strings.Fields(s.Text())
		sep := slices.Index(fields, "-")
		if sep < 0 || len(fields) < sep+4 || fields[sep+1] != "tmpfs" || !strings.HasPrefix(fields[4], dir+"/") {
			continue
		}
		var opts string
		for _, o := range strings.Split(fields[sep+3], ",") {
			if strings.HasPrefix(o, "size=") || strings.HasPrefix(o, "mode=") {
				opts += o + " "
			}
		}
		out[strings.TrimPrefix(fields[4], dir+"/")] = strings.TrimSpace(opts)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMemoryEmptyDirIsTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "mounting tmpfs needs root (CI runs as root)")
	}
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		volume("shm", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("64Mi"))}}),
		volume("mem", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}),
		volume("disk", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
	}
	dir := podDirWithoutLeftovers(t)
	v, err := VolumesAt(t.Context(), clocktesting.NewFakeClock(testTime), newFakeObjects(nil), pod, dir, testFacts())
	if err != nil {
		t.Fatal(err)
	}
	got := tmpfsMounts(t, dir)
	if got["shm"] != "size=65536k mode=777" {
		t.Errorf("tmpfs shm options = %q, want size=65536k mode=777", got["shm"])
	}
	if _, ok := got["mem"]; !ok || len(got) != 2 {
		t.Errorf("tmpfs mounts below the pod dir = %v, want shm and mem", got)
	}
	if err := os.WriteFile(v.Paths["shm"]+"/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file still open keeps "mem" busy: Release detaches it all the same.
	busy, err := os.Create(v.Paths["mem"] + "/open")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if err := v.Release(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{}, tmpfsMounts(t, dir)); diff != "" {
		t.Errorf("tmpfs mounts after Release (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(v.Paths["shm"] + "/f"); !os.IsNotExist(err) {
		t.Errorf("a file written to the tmpfs is still there after Release: %v", err)
	}
	if err := v.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
}

func TestFailedVolumesLeaveNoTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "mounting tmpfs needs root (CI runs as root)")
	}
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		volume("shm", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}),
		volume("data", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}),
	}
	dir := podDirWithoutLeftovers(t)
	if _, err := Volumes(t.Context(), newFakeObjects(nil), pod, dir, testFacts()); err == nil {
		t.Fatal("Volumes with a persistentVolumeClaim succeeded")
	}
	if diff := cmp.Diff(map[string]string{}, tmpfsMounts(t, dir)); diff != "" {
		t.Errorf("tmpfs mounts after a failed Volumes (-want +got):\n%s", diff)
	}
}

// podDirWithoutLeftovers is a temporary pod directory whose tmpfs mounts a
// failing test left behind are detached before it is removed.
func podDirWithoutLeftovers(t *testing.T) string {
	dir := t.TempDir()
	t.Cleanup(func() {
		for p := range tmpfsMounts(t, dir) {
			_ = unix.Unmount(filepath.Join(dir, p), unix.MNT_DETACH)
		}
	})
	return dir
}

// A Memory emptyDir is as large as the kubelet makes it: its sizeLimit, the
// pod's memory limit, or the node's allocatable memory, whichever is least.
func TestMemoryEmptyDirSize(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "mounting tmpfs needs root (CI runs as root)")
	}
	limited := func(mem string) corev1.Container {
		return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}}}
	}
	cases := map[string]struct {
		containers []corev1.Container
		sizeLimit  string
		facts      func(*PodFacts)
		want       string
	}{
		"the pod's memory limit":                 {containers: []corev1.Container{limited("32Mi"), limited("16Mi")}, want: "size=49152k"},
		"a smaller sizeLimit":                    {containers: []corev1.Container{limited("32Mi")}, sizeLimit: "8Mi", want: "size=8192k"},
		"a larger sizeLimit than the pod's":      {containers: []corev1.Container{limited("32Mi")}, sizeLimit: "64Mi", want: "size=32768k"},
		"a container without a limit: the node":  {containers: []corev1.Container{limited("32Mi"), {Name: "free"}}, facts: allocatable("96Mi"), want: "size=98304k"},
		"sizeLimit under the node's allocatable": {containers: []corev1.Container{{Name: "free"}}, sizeLimit: "4Mi", facts: allocatable("96Mi"), want: "size=4096k"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := testPod(tc.containers...)
			src := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}
			if tc.sizeLimit != "" {
				src.SizeLimit = ptr.To(resource.MustParse(tc.sizeLimit))
			}
			pod.Spec.Volumes = []corev1.Volume{volume("mem", corev1.VolumeSource{EmptyDir: src})}
			facts := testFacts()
			if tc.facts != nil {
				tc.facts(&facts)
			}
			dir := podDirWithoutLeftovers(t)
			v, err := VolumesAt(t.Context(), clocktesting.NewFakeClock(testTime), newFakeObjects(nil), pod, dir, facts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = v.Release() })
			if got := tmpfsMounts(t, dir)["mem"]; got != tc.want+" mode=777" {
				t.Errorf("tmpfs options %q, want %q", got, tc.want+" mode=777")
			}
		})
	}
}

// allocatable sets the node's allocatable memory.
func allocatable(mem string) func(*PodFacts) {
	return func(f *PodFacts) { f.NodeAllocatable[corev1.ResourceMemory] = resource.MustParse(mem) }
}
