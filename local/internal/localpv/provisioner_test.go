package localpv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

func provisionOptions(class *corev1.PersistentVolumeReclaimPolicy) controller.ProvisionOptions {
	sc := DefaultStorageClass()
	sc.ReclaimPolicy = class
	sc.MountOptions = []string{"noatime"}
	return controller.ProvisionOptions{
		StorageClass: sc,
		PVName:       "pvc-1234",
		PVC: &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Mi")}},
			},
		},
		SelectedNodeName: "ray-local",
	}
}

// requireRoot skips a test that mounts filesystems when not root.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		capability.Missing(t, "needs root: loop devices and mounts")
	}
}

// newProvisioner is a provisioner with directories of its own, whose
// volumes a failed test left mounted are unmounted at its end.
func newProvisioner(t *testing.T) *Provisioner {
	p := &Provisioner{Dir: t.TempDir(), ImageDir: t.TempDir(), NodeName: "ray-local"}
	t.Cleanup(func() {
		if err := DetachAll(p.Dir); err != nil {
			t.Errorf("unmounting the volumes: %v", err)
		}
	})
	return p
}

// TestProvisionAndDelete: a claim gets an ext4 filesystem of its size,
// mounted on its directory with the class's mount options, and a local PV
// pinned to the node with that size, the claim's modes and the class's
// reclaim policy; writing past the size fails with ENOSPC, the file on the
// host holding no more than the size; Delete unmounts it and removes the
// directory and the file.
func TestProvisionAndDelete(t *testing.T) {
	requireRoot(t)
	p := newProvisioner(t)
	pv, state, err := p.Provision(t.Context(), provisionOptions(ptr.To(corev1.PersistentVolumeReclaimRetain)))
	if err != nil || state != controller.ProvisioningFinished {
		t.Fatalf("Provision: %v, %s", err, state)
	}
	volDir := filepath.Join(p.Dir, "pvc-1234")
	want := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-1234"},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			MountOptions:                  []string{"noatime"},
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Mi")},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: volDir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: "In", Values: []string{"ray-local"}}},
			}}}},
		},
	}
	if diff := cmp.Diff(want, pv); diff != "" {
		t.Errorf("PV (-want +got):\n%s", diff)
	}
	if info, err := os.Stat(volDir); err != nil || info.Mode().Perm() != 0o777 {
		t.Fatalf("volume directory: %v, %v", info, err)
	}
	mnt := mountOf(t, volDir)
	if mnt.FSType != "ext4" || !strings.HasPrefix(mnt.Source, "/dev/loop") || !strings.Contains(mnt.Options, "noatime") {
		t.Errorf("volume mount: %s %s %s, want ext4 from a loop device with noatime", mnt.FSType, mnt.Source, mnt.Options)
	}
	written, err := fill(filepath.Join(volDir, "f"))
	if !errors.Is(err, unix.ENOSPC) || written > 20<<20 || written < 10<<20 {
		t.Errorf("writing without end: %d bytes, then %v; want ENOSPC within the 20 MiB", written, err)
	}
	used := allocated(t, p.imagePath("pvc-1234"))
	if used > 20<<20 {
		t.Errorf("the volume's file takes %d bytes of the host's disk, want at most 20 MiB", used)
	}
	t.Logf("a 20 MiB volume took %d bytes before ENOSPC; its file takes %d bytes on the host", written, used)
	if err := p.Delete(t.Context(), pv); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for _, gone := range []string{volDir, p.imagePath("pvc-1234")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("after Delete %s is still there: %v", gone, err)
		}
	}
	if loop, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(mnt.Source), "loop", "backing_file")); err == nil {
		t.Errorf("after Delete %s still holds %s", mnt.Source, loop)
	}
}

// TestReattach: a volume whose filesystem is not mounted (the machine
// restarted) is mounted again with its data by Reattach, which leaves a
// mounted one as it is and ignores PVs that are not the provisioner's.
func TestReattach(t *testing.T) {
	requireRoot(t)
	p := newProvisioner(t)
	pv, _, err := p.Provision(t.Context(), provisionOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	volDir := pv.Spec.Local.Path
	if err := os.WriteFile(filepath.Join(volDir, "kept"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := detach(volDir); err != nil {
		t.Fatal(err)
	}
	pv.Annotations = map[string]string{provisionedByAnnotation: ProvisionerName}
	other := localPV("pvc-other", filepath.Join(p.Dir, "pvc-other"))
	client := fake.NewClientset(pv, other)
	for range 2 { // the second finds it mounted
		if err := p.Reattach(t.Context(), client, testr.New(t)); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(volDir, "kept")); err != nil || string(b) != "data" {
		t.Errorf("after Reattach: %q, %v; want the data written before", b, err)
	}
	if n := mountCount(t, volDir); n != 1 {
		t.Errorf("%s is mounted %d times, want once", volDir, n)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "pvc-other")); !os.IsNotExist(err) {
		t.Errorf("Reattach made a directory for a PV that is not its own: %v", err)
	}
}

// mountOf is the mount on dir.
func mountOf(t *testing.T, dir string) mountinfo.Info {
	t.Helper()
	mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
	if err != nil || len(mounts) != 1 {
		t.Fatalf("mounts on %s: %v, %v", dir, mounts, err)
	}
	return *mounts[0]
}

// mountCount is how many mounts there are on dir.
func mountCount(t *testing.T, dir string) int {
	t.Helper()
	mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
	if err != nil {
		t.Fatal(err)
	}
	return len(mounts)
}

// fill writes to path until a write fails, and returns how much it wrote
// and the error.
func fill(path string) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	var written int64
	for {
		n, err := f.Write(chunk)
		written += int64(n)
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			return written, err
		}
	}
}

// allocated is how many bytes of its filesystem path takes.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestDeleteIgnoresOtherVolumes: Delete touches only directories directly
// under Dir named after their PV.
func TestDeleteIgnoresOtherVolumes(t *testing.T) {
	p := newProvisioner(t)
	dir := p.Dir
	other := t.TempDir()
	for name, pv := range map[string]*corev1.PersistentVolume{
		"outside the volume directory": localPV("pvc-1", other),
		"the volume directory itself":  localPV(filepath.Base(dir), dir),
		"another volume's directory":   localPV("pvc-1", filepath.Join(dir, "pvc-2")),
		"a nested path":                localPV("pvc-1", filepath.Join(dir, "x", "pvc-1")),
		"an NFS volume":                {ObjectMeta: metav1.ObjectMeta{Name: "pvc-1"}},
	} {
		t.Run(name, func(t *testing.T) {
			var ignored *controller.IgnoredError
			if err := p.Delete(t.Context(), pv); !errors.As(err, &ignored) {
				t.Errorf("Delete = %v, want an IgnoredError", err)
			}
		})
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a directory outside was touched: %v", err)
	}
}

func localPV(name, path string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}}}}
}

// TestProvisionRefusesBlockAndOtherNodes: block volumes and classes that
// allow expansion are refused for good; a claim whose pod landed elsewhere
// is sent back to the scheduler.
func TestProvisionRefusesBlockAndOtherNodes(t *testing.T) {
	p := newProvisioner(t)
	block := provisionOptions(nil)
	block.PVC.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	if _, state, err := p.Provision(t.Context(), block); err == nil || state != controller.ProvisioningFinished {
		t.Errorf("block: %v, %s; want an error, Finished", err, state)
	}
	expanding := provisionOptions(nil)
	expanding.StorageClass.AllowVolumeExpansion = ptr.To(true)
	if _, state, err := p.Provision(t.Context(), expanding); err == nil || !strings.Contains(err.Error(), "allowVolumeExpansion") || state != controller.ProvisioningFinished {
		t.Errorf("a class allowing expansion: %v, %s; want an error naming allowVolumeExpansion, Finished", err, state)
	}
	elsewhere := provisionOptions(nil)
	elsewhere.SelectedNodeName = "kwok-1"
	if _, state, err := p.Provision(t.Context(), elsewhere); err == nil || state != controller.ProvisioningReschedule {
		t.Errorf("other node: %v, %s; want an error, Reschedule", err, state)
	}
	for _, dir := range []string{p.Dir, p.ImageDir} {
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("refused claims left %d entries in %s", len(entries), dir)
		}
	}
}
