// Package gcsstorage builds what the embedded RocksDB backend of GCS fault
// tolerance needs (spec.gcsFaultToleranceOptions.backend: rocksdb, behind the
// GCSFaultToleranceEmbeddedStorage gate): the PersistentVolumeClaim the
// operator manages for a cluster, and the names and paths the head Pod uses
// to mount it. Everything here is pure; the RayCluster controller does the
// API calls.
package gcsstorage

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/ownerref"
)

// KubeRay's names, paths and defaults of the embedded store.
const (
	// VolumeName is the head Pod volume backed by the claim.
	VolumeName = "gcs-storage"
	// MountPath is where the Ray container mounts it.
	MountPath = "/data/gcs"
	// EnvStorage selects the GCS storage backend in Ray.
	EnvStorage = "RAY_gcs_storage"
	// EnvStoragePath is the directory of the RocksDB store.
	EnvStoragePath = "RAY_gcs_storage_path"
	// RocksDB is EnvStorage's value for the embedded backend.
	RocksDB = "rocksdb"
	// PVCSuffix follows the cluster name in the operator-managed claim's name.
	PVCSuffix = "-gcs-pvc"
	// DefaultSize is the operator-managed claim's size when storage.size is unset.
	DefaultSize = "1Gi"
)

// Embedded reports whether cluster keeps its GCS state in the embedded
// RocksDB store rather than in Redis.
func Embedded(cluster *rayv1.RayCluster) bool {
	o := cluster.Spec.GcsFaultToleranceOptions
	return o != nil && o.Backend == rayv1.GcsFTBackendRocksDB
}

// storage is the cluster's storage settings, nil when none are given.
func storage(cluster *rayv1.RayCluster) *rayv1.GcsEmbeddedStorage {
	if o := cluster.Spec.GcsFaultToleranceOptions; o != nil {
		return o.Storage
	}
	return nil
}

// UserClaim reports whether the user names their own claim
// (storage.claimName), which the operator never creates, changes or deletes.
func UserClaim(cluster *rayv1.RayCluster) bool {
	s := storage(cluster)
	return s != nil && s.ClaimName != ""
}

// ClaimName is the claim the head Pod mounts: the user's storage.claimName,
// else the operator-managed "<cluster>-gcs-pvc".
func ClaimName(cluster *rayv1.RayCluster) string {
	if UserClaim(cluster) {
		return storage(cluster).ClaimName
	}
	return cluster.Name + PVCSuffix
}

// SubPath is the directory of the volume the head mounts, "" for its root.
func SubPath(cluster *rayv1.RayCluster) string {
	if s := storage(cluster); s != nil {
		return s.SubPath
	}
	return ""
}

// Retain reports whether the operator-managed claim outlives the cluster
// (storage.deletionPolicy: Retain): it then carries no owner reference.
func Retain(cluster *rayv1.RayCluster) bool {
	s := storage(cluster)
	return s != nil && ptr.Deref(s.DeletionPolicy, "") == rayv1.RetainGCSStorageDeletionPolicy
}

// BuildPVC builds the operator-managed claim of cluster, labelled with the
// cluster's name, with KubeRay's defaults: 1Gi, ReadWriteOnce, the default
// StorageClass. It sets no owner reference: whether there is one depends on
// the deletion policy, which the controller applies.
func BuildPVC(cluster *rayv1.RayCluster) *corev1.PersistentVolumeClaim {
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	size := resource.MustParse(DefaultSize)
	var class *string
	if s := storage(cluster); s != nil {
		if len(s.AccessModes) > 0 {
			modes = s.AccessModes
		}
		if s.Size != nil {
			size = *s.Size
		}
		class = s.StorageClassName
	}
	return &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      ClaimName(cluster),
			Namespace: cluster.Namespace,
			Labels:    map[string]string{rayv1.LabelCluster: cluster.Name},
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: class,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}
}

// ApplyDeletionPolicy gives an operator-managed claim the cluster's
// controller owner reference, or removes it under Retain, so that a changed
// deletionPolicy takes effect on a claim that exists already. It reports
// whether pvc changed, and fails when another object controls the claim.
func ApplyDeletionPolicy(cluster *rayv1.RayCluster, pvc *corev1.PersistentVolumeClaim) (bool, error) {
	owned := metav1.IsControlledBy(pvc, cluster)
	retain := Retain(cluster)
	switch {
	case retain && owned:
		pvc.OwnerReferences = slices.DeleteFunc(pvc.OwnerReferences, func(r metav1.OwnerReference) bool {
			return r.UID == cluster.UID && ptr.Deref(r.Controller, false)
		})
		return true, nil
	case !retain && !owned:
		if c := metav1.GetControllerOf(pvc); c != nil {
			return false, fmt.Errorf("PVC %s/%s is already controlled by %s %s", pvc.Namespace, pvc.Name, c.Kind, c.Name)
		}
		pvc.OwnerReferences = append(pvc.OwnerReferences, ownerref.ForCluster(cluster))
		return true, nil
	}
	return false, nil
}

// Drift describes how an existing claim differs from the desired one in
// what the operator sets and cannot change in place (size, StorageClass,
// access modes), "" when it does not. An unset desired StorageClass matches
// any: the API server fills in the default class.
func Drift(desired, existing *corev1.PersistentVolumeClaim) string {
	var diffs []string
	want := desired.Spec.Resources.Requests[corev1.ResourceStorage]
	got := existing.Spec.Resources.Requests[corev1.ResourceStorage]
	if want.Cmp(got) != 0 {
		diffs = append(diffs, fmt.Sprintf("requested size %s != current %s", want.String(), got.String()))
	}
	if desired.Spec.StorageClassName != nil && !ptr.Equal(desired.Spec.StorageClassName, existing.Spec.StorageClassName) {
		diffs = append(diffs, fmt.Sprintf("storageClassName %s != current %s",
			ptr.Deref(desired.Spec.StorageClassName, "<default>"), ptr.Deref(existing.Spec.StorageClassName, "<default>")))
	}
	if !sameModes(desired.Spec.AccessModes, existing.Spec.AccessModes) {
		diffs = append(diffs, fmt.Sprintf("accessModes %v != current %v", desired.Spec.AccessModes, existing.Spec.AccessModes))
	}
	return strings.Join(diffs, "; ")
}

// sameModes compares access modes as multisets: their order carries no meaning.
func sameModes(a, b []corev1.PersistentVolumeAccessMode) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[corev1.PersistentVolumeAccessMode]int{}
	for _, m := range a {
		count[m]++
	}
	for _, m := range b {
		count[m]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}
