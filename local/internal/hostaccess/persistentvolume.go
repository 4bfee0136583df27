package hostaccess

import (
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReasonPersistentVolume refuses to mount a persistent volume whose
// directory the node neither provisioned nor shares.
const ReasonPersistentVolume = "PersistentVolumeForbidden"

// WithVolumeDir returns p that also mounts persistent volumes whose
// directory lies under dir, the directory where the node's provisioner
// creates them (absolute, existing; its symlinks are resolved here, once).
func (p Policy) WithVolumeDir(dir string) (Policy, error) {
	resolved, err := sharedDir(dir)
	if err != nil {
		return Policy{}, fmt.Errorf("volume directory: %w", err)
	}
	p.volumeDir = resolved
	return p, nil
}

// PersistentVolumePath returns the host directory of a local or hostPath
// persistent volume, symlinks followed, when the node mounts it: when it
// lies under the node's volume directory, where only the node's provisioner
// creates directories, or under a directory the node shares with hostPath
// volumes. Otherwise it returns why not. The volume's annotations do not
// matter: anyone who may create a PersistentVolume may set them, and a
// PersistentVolume naming an arbitrary host path must not let a pod read
// the host.
func (p Policy) PersistentVolumePath(pv *corev1.PersistentVolume) (path, refusal string) {
	var src string
	switch {
	case pv.Spec.Local != nil:
		src = pv.Spec.Local.Path
	case pv.Spec.HostPath != nil:
		src = pv.Spec.HostPath.Path
	default:
		return "", fmt.Sprintf("persistent volume %q: the local node mounts only local and hostPath persistent volumes", pv.Name)
	}
	if !filepath.IsAbs(src) {
		return "", fmt.Sprintf("persistent volume %q: path %q is not absolute", pv.Name, src)
	}
	resolved, err := resolve(src)
	if err != nil {
		return "", fmt.Sprintf("persistent volume %q (%s): %v", pv.Name, src, err)
	}
	if (p.volumeDir != "" && under(p.volumeDir, resolved) && resolved != p.volumeDir) || p.shares(resolved) {
		return resolved, ""
	}
	where := src
	if resolved != src {
		where = fmt.Sprintf("%s, resolved %s", src, resolved)
	}
	provisioned := "none"
	if p.volumeDir != "" {
		provisioned = p.volumeDir
	}
	shared := "none"
	if len(p.sharedDirs) > 0 {
		shared = strings.Join(p.sharedDirs, ",")
	}
	return "", fmt.Sprintf("%s: persistent volume %q (%s) is neither under the node's volume directory (%s) nor under a directory the node shares (--%s: %s)",
		ReasonPersistentVolume, pv.Name, where, provisioned, FlagSharedHostDirs, shared)
}
