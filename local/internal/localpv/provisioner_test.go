package localpv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
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
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		},
		SelectedNodeName: "ray-local",
	}
}

// TestProvisionAndDelete: a claim gets a directory and a local PV pinned to
// the node with the claim's size and modes and the class's reclaim policy;
// Delete removes the directory with its contents.
func TestProvisionAndDelete(t *testing.T) {
	dir := t.TempDir()
	p := &Provisioner{Dir: dir, NodeName: "ray-local"}
	pv, state, err := p.Provision(t.Context(), provisionOptions(ptr.To(corev1.PersistentVolumeReclaimRetain)))
	if err != nil || state != controller.ProvisioningFinished {
		t.Fatalf("Provision: %v, %s", err, state)
	}
	volDir := filepath.Join(dir, "pvc-1234")
	want := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-1234"},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			MountOptions:                  []string{"noatime"},
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
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
	if err := os.WriteFile(filepath.Join(volDir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(t.Context(), pv); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := os.Stat(volDir); !os.IsNotExist(err) {
		t.Errorf("after Delete the directory is still there: %v", err)
	}
}

// TestDeleteIgnoresOtherVolumes: Delete touches only directories directly
// under Dir named after their PV.
func TestDeleteIgnoresOtherVolumes(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	p := &Provisioner{Dir: dir, NodeName: "ray-local"}
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

// TestProvisionRefusesBlockAndOtherNodes: block volumes are refused for
// good; a claim whose pod landed elsewhere is sent back to the scheduler.
func TestProvisionRefusesBlockAndOtherNodes(t *testing.T) {
	p := &Provisioner{Dir: t.TempDir(), NodeName: "ray-local"}
	block := provisionOptions(nil)
	block.PVC.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	if _, state, err := p.Provision(t.Context(), block); err == nil || state != controller.ProvisioningFinished {
		t.Errorf("block: %v, %s; want an error, Finished", err, state)
	}
	elsewhere := provisionOptions(nil)
	elsewhere.SelectedNodeName = "kwok-1"
	if _, state, err := p.Provision(t.Context(), elsewhere); err == nil || state != controller.ProvisioningReschedule {
		t.Errorf("other node: %v, %s; want an error, Reschedule", err, state)
	}
	if entries, _ := os.ReadDir(p.Dir); len(entries) != 0 {
		t.Errorf("refused claims left %d directories", len(entries))
	}
}
