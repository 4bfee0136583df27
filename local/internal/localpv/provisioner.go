// Package localpv provisions the local cluster's persistent volumes: an
// ext4 filesystem of the claim's size per claim, mounted on a directory
// under the node's volume directory, with a local PersistentVolume pinned
// to the node, through the external-provisioner library's controller (the
// PV binder of kube-controller-manager binds them). The cluster's default
// StorageClass names it.
package localpv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// ProvisionerName is the provisioner of the default StorageClass, and the
// pv.kubernetes.io/provisioned-by annotation of the volumes it makes.
const ProvisionerName = "ray-local/local-path"

// Provisioner makes and removes the volumes' filesystems and directories.
type Provisioner struct {
	// Dir holds one directory per volume, named after the volume, on which
	// the volume's filesystem is mounted.
	Dir string
	// ImageDir holds the file of each volume's filesystem, <volume>.ext4;
	// outside Dir, where pods' volumes are.
	ImageDir string
	// NodeName is the node every volume is pinned to.
	NodeName string
}

var _ controller.Provisioner = (*Provisioner)(nil)

// Provision makes the claim's filesystem, of the claim's size, and mounts
// it on its directory (see filesystem.go); it returns its PersistentVolume:
// a local volume of that size and the claim's access modes on the node,
// with the class's reclaim policy and mount options (which the filesystem's
// mount takes).
func (p *Provisioner) Provision(_ context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	if opts.SelectedNodeName != "" && opts.SelectedNodeName != p.NodeName {
		return nil, controller.ProvisioningReschedule, fmt.Errorf("volumes of %s live on node %s, not %s", ProvisionerName, p.NodeName, opts.SelectedNodeName)
	}
	if mode := opts.PVC.Spec.VolumeMode; mode != nil && *mode == corev1.PersistentVolumeBlock {
		return nil, controller.ProvisioningFinished, errors.New("block volumes are not supported: the local node's volumes are directories")
	}
	if ptr.Deref(opts.StorageClass.AllowVolumeExpansion, false) {
		return nil, controller.ProvisioningFinished, fmt.Errorf("StorageClass %q sets allowVolumeExpansion, which %s does not honour (a volume is a filesystem of the claim's size, and the node runs no resizer): use a class without it", opts.StorageClass.Name, ProvisionerName)
	}
	size := imageSize(opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage])
	if err := p.createImage(opts.PVName, size); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	if err := p.attach(opts.PVName, opts.StorageClass.MountOptions); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	dir := filepath.Join(p.Dir, opts.PVName)
	// 0777: the pods' users are unprivileged on the host until the node
	// gives the filesystem's root to the pod that mounts it. A root some
	// pod owns already (a Provision retried late) stays as it is.
	info, err := os.Stat(dir)
	if err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid == 0 {
		if err := os.Chmod(dir, 0o777); err != nil {
			return nil, controller.ProvisioningFinished, err
		}
	}
	return volume(opts, dir, p.NodeName, size), controller.ProvisioningFinished, nil
}

// volume is the PersistentVolume of a provisioned filesystem of size bytes
// mounted on dir.
func volume(opts controller.ProvisionOptions, dir, node string, size int64) *corev1.PersistentVolume {
	reclaim := corev1.PersistentVolumeReclaimDelete
	if r := opts.StorageClass.ReclaimPolicy; r != nil {
		reclaim = *r
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   opts.PVC.Spec.AccessModes,
			MountOptions:                  opts.StorageClass.MountOptions,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(size, resource.BinarySI)},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
				}},
			}}}},
		},
	}
}

// Delete unmounts a volume's filesystem and removes its directory and its
// file (a volume provisioned before volumes had filesystems is a plain
// directory, removed with its contents). It ignores volumes that are not
// ones it made: PVs of other provisioners, or whose path is not a directory
// directly under Dir.
func (p *Provisioner) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	if pv.Spec.Local == nil || filepath.Dir(pv.Spec.Local.Path) != filepath.Clean(p.Dir) || filepath.Base(pv.Spec.Local.Path) != pv.Name {
		return &controller.IgnoredError{Reason: fmt.Sprintf("%s is not a directory of %s", pv.Name, ProvisionerName)}
	}
	if err := detach(pv.Spec.Local.Path); err != nil {
		return err
	}
	if err := os.RemoveAll(pv.Spec.Local.Path); err != nil {
		return fmt.Errorf("removing the volume's directory: %w", err)
	}
	if err := os.Remove(p.imagePath(pv.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the volume's file: %w", err)
	}
	return nil
}
