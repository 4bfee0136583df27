package podinputs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// idRangeSize is the number of ids of a pod's user namespace; every pod's
// range starts at a multiple of it (package sandbox hands them out), so
// id % idRangeSize is the id inside the pod that owned a file.
const idRangeSize = 1 << 16

// claimVolume resolves a persistentVolumeClaim volume to the directory of
// the persistent volume bound to the claim, gives that directory to the
// pod (see shiftOwners), and records it. It waits, with a *ConfigError,
// while the claim is missing, unbound or being deleted, and refuses a
// volume whose directory the node's host-access policy does not mount.
func (v *PodVolumes) claimVolume(ctx context.Context, b *contents, src *corev1.PersistentVolumeClaimVolumeSource, name string) error {
	path, err := b.claimPath(ctx, src.ClaimName)
	if err != nil {
		return err
	}
	if err := shiftOwners(path, b.facts.VolumeOwner); err != nil {
		return err
	}
	v.Paths[name] = path
	if src.ReadOnly {
		v.readOnly[name] = true
	}
	return nil
}

// claimPath follows claim -> bound PersistentVolume -> host directory.
func (b *contents) claimPath(ctx context.Context, claim string) (string, error) {
	objs := b.fetch.objs
	pvc, err := objs.PersistentVolumeClaim(ctx, b.pod.Namespace, claim)
	if apierrors.IsNotFound(err) {
		ce := configErrorf("persistentvolumeclaim %q not found", claim)
		ce.Err = err
		return "", ce
	}
	if err != nil {
		return "", configErrorf("failed to get persistentvolumeclaim %q: %v", claim, err)
	}
	switch {
	case pvc.DeletionTimestamp != nil:
		return "", configErrorf("persistentvolumeclaim %q is being deleted", claim)
	case pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "":
		return "", configErrorf("persistentvolumeclaim %q is not bound yet (phase %q): waiting for a persistent volume", claim, pvc.Status.Phase)
	}
	pv, err := objs.PersistentVolume(ctx, pvc.Spec.VolumeName)
	if err != nil {
		return "", configErrorf("failed to get persistentvolume %q of claim %q: %v", pvc.Spec.VolumeName, claim, err)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != pvc.UID {
		return "", configErrorf("persistentvolume %q is not bound to claim %q", pv.Name, claim)
	}
	path, refusal := b.facts.HostAccess.PersistentVolumePath(pv)
	if refusal != "" {
		return "", configErrorf("%s", refusal)
	}
	if pv.Spec.HostPath != nil {
		if err := checkHostPath(&corev1.HostPathVolumeSource{Path: path, Type: pv.Spec.HostPath.Type}); err != nil {
			return "", err
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", configErrorf("persistentvolume %q: %v", pv.Name, err)
	}
	if !info.IsDir() {
		return "", configErrorf("persistentvolume %q: %s is not a directory", pv.Name, path)
	}
	return path, nil
}

// shiftOwners gives a persistent volume's directory to the pod's root (and
// fsGroup) when its owner is not that already, as a kubelet with
// fsGroupChangePolicy OnRootMismatch does: every pod has a user namespace of
// its own, so the files an earlier pod wrote belong to that pod's ids. Each
// file below moves to the same id in this pod's range (id % idRangeSize);
// the directory itself goes to owner. A pod on host users (owner nil or
// root) changes nothing. Two pods that share a volume at once therefore
// take it from each other: the one that mounted it last owns it.
func shiftOwners(dir string, owner *Owner) error {
	if owner == nil || owner.UID == 0 {
		return nil
	}
	uid, gid, err := ownerOf(dir)
	if err != nil {
		return err
	}
	if uid == owner.UID && gid == owner.GID {
		return nil
	}
	base := owner.UID
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return os.Lchown(p, owner.UID, owner.GID)
		}
		fu, fg, err := ownerOf(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed by a pod meanwhile
		}
		if err != nil {
			return err
		}
		return os.Lchown(p, base+fu%idRangeSize, base+fg%idRangeSize)
	})
}
