package podinputs

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

// idRangeSize is the number of ids of a pod's user namespace; every pod's
// range starts at a multiple of it (package sandbox hands them out), so
// id % idRangeSize is the id inside the pod that owned a file.
const idRangeSize = 1 << 16

// claimVolume sets up a persistentVolumeClaim volume: it finds the
// directory of the persistent volume bound to the claim, opens it once
// (below the directory where the node's host-access policy allows it, no
// symlink followed), gives it to the pod (see shiftOwners) and mounts what
// it opened at target (see mountFD). It waits, with a *ConfigError, while
// the claim is missing, unbound or being deleted, and refuses a volume
// whose directory the policy does not mount.
func (v *PodVolumes) claimVolume(ctx context.Context, b *contents, src *corev1.PersistentVolumeClaimVolumeSource, name, target string) error {
	pv, loc, err := b.claimLocation(ctx, src.ClaimName)
	if err != nil {
		return err
	}
	fd, err := openClaimDir(pv, loc)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := shiftOwners(fd, b.facts.VolumeOwner); err != nil {
		return err
	}
	if err := v.bind(fd, target); err != nil {
		return err
	}
	v.Paths[name] = target
	if src.ReadOnly {
		v.readOnly[name] = true
	}
	return nil
}

// claimLocation follows claim -> bound PersistentVolume -> where its
// directory lies on the host.
func (b *contents) claimLocation(ctx context.Context, claim string) (*corev1.PersistentVolume, hostaccess.Location, error) {
	objs := b.fetch.objs
	pvc, err := objs.PersistentVolumeClaim(ctx, b.pod.Namespace, claim)
	if apierrors.IsNotFound(err) {
		ce := configErrorf("persistentvolumeclaim %q not found", claim)
		ce.Err = err
		return nil, hostaccess.Location{}, ce
	}
	if err != nil {
		return nil, hostaccess.Location{}, configErrorf("failed to get persistentvolumeclaim %q: %v", claim, err)
	}
	switch {
	case pvc.DeletionTimestamp != nil:
		return nil, hostaccess.Location{}, configErrorf("persistentvolumeclaim %q is being deleted", claim)
	case pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "":
		return nil, hostaccess.Location{}, configErrorf("persistentvolumeclaim %q is not bound yet (phase %q): waiting for a persistent volume", claim, pvc.Status.Phase)
	}
	pv, err := objs.PersistentVolume(ctx, pvc.Spec.VolumeName)
	if err != nil {
		return nil, hostaccess.Location{}, configErrorf("failed to get persistentvolume %q of claim %q: %v", pvc.Spec.VolumeName, claim, err)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != pvc.UID {
		return nil, hostaccess.Location{}, configErrorf("persistentvolume %q is not bound to claim %q", pv.Name, claim)
	}
	loc, refusal := b.facts.HostAccess.PersistentVolumeLocation(pv)
	if refusal != "" {
		return nil, hostaccess.Location{}, configErrorf("%s", refusal)
	}
	return pv, loc, nil
}

// openClaimDir opens the directory of pv at loc for reading, creating a
// hostPath persistent volume's as its type says (see openHostPath).
func openClaimDir(pv *corev1.PersistentVolume, loc hostaccess.Location) (int, error) {
	var fd int
	var err error
	if pv.Spec.HostPath != nil {
		fd, err = openHostPath(loc, &corev1.HostPathVolumeSource{Path: loc.Path(), Type: pv.Spec.HostPath.Type})
	} else {
		fd, err = openLocation(loc, 0)
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return -1, err
	}
	if err != nil {
		return -1, configErrorf("persistentvolume %q: %v", pv.Name, err)
	}
	defer unix.Close(fd)
	dir, err := openat2(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY, exactly)
	if errors.Is(err, unix.ENOTDIR) {
		return -1, configErrorf("persistentvolume %q: %s is not a directory", pv.Name, loc.Path())
	}
	if err != nil {
		return -1, configErrorf("persistentvolume %q: %v", pv.Name, &fs.PathError{Op: "open", Path: loc.Path(), Err: err})
	}
	return dir, nil
}

// shiftOwners gives a persistent volume's directory, open at dir, to the
// pod's root (and fsGroup) when its owner is not that already, as a kubelet
// with fsGroupChangePolicy OnRootMismatch does: every pod has a user
// namespace of its own, so the files an earlier pod wrote belong to that
// pod's ids. Each file below moves to the same id in this pod's range
// (id % idRangeSize); the directory itself goes to owner. A pod on host
// users (owner nil or root) changes nothing. Two pods that share a volume
// at once therefore take it from each other: the one that mounted it last
// owns it.
//
// The other pod may rename anything in the volume meanwhile, so the walk
// never names a path: it reads each directory through a descriptor, changes
// owners relative to it without following symlinks, and enters a
// subdirectory only by opening it without following a symlink there.
func shiftOwners(dir int, owner *Owner) error {
	if owner == nil || owner.UID == 0 {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return err
	}
	if int(st.Uid) == owner.UID && int(st.Gid) == owner.GID {
		return nil
	}
	if err := unix.Fchown(dir, owner.UID, owner.GID); err != nil {
		return err
	}
	return shiftBelow(dir, owner.UID)
}

// shiftBelow moves everything below the directory open at dir into the
// range that starts at base.
func shiftBelow(dir, base int) error {
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		var st unix.Stat_t
		err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			continue // removed by a pod meanwhile
		}
		if err != nil {
			return err
		}
		uid, gid := base+int(st.Uid)%idRangeSize, base+int(st.Gid)%idRangeSize
		if err := unix.Fchownat(dir, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		sub, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			continue // no longer a directory: replaced by a pod meanwhile
		}
		if err != nil {
			return err
		}
		err = shiftBelow(sub, base)
		unix.Close(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// readNames lists the directory open at dir, without "." and "..". It reads
// through a duplicate, so that dir stays open.
func readNames(dir int) ([]string, error) {
	dup, err := unix.FcntlInt(uintptr(dir), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "volume directory")
	defer f.Close()
	return f.Readdirnames(-1)
}
