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

// PersistentVolumeLocation returns where the directory of a local or hostPath
// persistent volume lies, symlinks followed, when the node mounts it: when it
// lies under the node's volume directory, where only the node's provisioner
// creates directories, or under a directory the node shares with hostPath
// volumes. Otherwise it returns why not. The volume's annotations do not
// matter: anyone who may create a PersistentVolume may set them, and a
// PersistentVolume naming an arbitrary host path must not let a pod read
// the host.
func (p Policy) PersistentVolumeLocation(pv *corev1.PersistentVolume) (loc Location, refusal string) {
	var src string
	switch {
	case pv.Spec.Local != nil:
		src = pv.Spec.Local.Path
	case pv.Spec.HostPath != nil:
		src = pv.Spec.HostPath.Path
	default:
		return Location{}, fmt.Sprintf("persistent volume %q: the local node mounts only local and hostPath persistent volumes", pv.Name)
	}
	if !filepath.IsAbs(src) {
		return Location{}, fmt.Sprintf("persistent volume %q: path %q is not absolute", pv.Name, src)
	}
	resolved, err := resolve(src)
	if err != nil {
		return Location{}, fmt.Sprintf("persistent volume %q (%s): %v", pv.Name, src, err)
	}
	if p.volumeDir != "" {
		if rel, ok := below(p.volumeDir, resolved); ok && rel != "." {
			return Location{Dir: p.volumeDir, Rel: rel}, ""
		}
	}
	if loc, ok := p.shares(resolved); ok {
		return loc, ""
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
	return Location{}, fmt.Sprintf("%s: persistent volume %q (%s) is neither under the node's volume directory (%s) nor under a directory the node shares (--%s: %s)",
		ReasonPersistentVolume, pv.Name, where, provisioned, FlagSharedHostDirs, shared)
}
