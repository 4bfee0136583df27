package podinputs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Mount is a bind mount of a host path into a container.
type Mount struct {
	// Source is the host path.
	Source string
	// Destination is the path in the container.
	Destination string
	// ReadOnly mounts it read-only.
	ReadOnly bool
}

// Mounts are a container's volumeMounts as bind mounts of v's paths. A subPath
// mounts the path below the volume (created as a directory when missing),
// with symlinks resolved so that it cannot leave the volume (a subPath of a
// configMap key is therefore the file of the current contents, and, as on
// a kubelet, does not see later updates); configMap,
// secret, downwardAPI and projected volumes are always read-only, as a
// kubelet mounts them. A subPathExpr needs the container's environment: use
// ExpandedMounts.
func Mounts(c *corev1.Container, v *PodVolumes) ([]Mount, error) {
	return ExpandedMounts(c, v, nil)
}

// ExpandedMounts is Mounts with subPathExpr expanded from env (the
// container's environment as Env builds it); a reference to a variable that
// is missing or empty is an error, as on a kubelet.
func ExpandedMounts(c *corev1.Container, v *PodVolumes, env []string) ([]Mount, error) {
	lookup := envLookup(env)
	out := make([]Mount, 0, len(c.VolumeMounts))
	for _, vm := range c.VolumeMounts {
		src, ok := v.Paths[vm.Name]
		if !ok {
			return nil, &ConfigError{Reason: ReasonCreateContainerConfigError,
				Message: fmt.Sprintf("cannot find volume %q to mount into container %q", vm.Name, c.Name)}
		}
		sub, err := subPath(vm, lookup)
		if err != nil {
			return nil, err
		}
		if sub != "" {
			if src, err = resolveSubPath(src, sub); err != nil {
				return nil, &ConfigError{Reason: ReasonCreateContainerConfigError, Err: err,
					Message: fmt.Sprintf("failed to prepare subPath for volumeMount %q of container %q: %v", vm.Name, c.Name, err)}
			}
		}
		out = append(out, Mount{
			Source:      src,
			Destination: path.Clean("/" + vm.MountPath),
			ReadOnly:    vm.ReadOnly || v.readOnly[vm.Name],
		})
	}
	return out, nil
}

func subPath(vm corev1.VolumeMount, lookup func(string) (string, bool)) (string, error) {
	if vm.SubPathExpr == "" {
		return vm.SubPath, nil
	}
	var missing []string
	sub := expand(vm.SubPathExpr, func(name string) (string, bool) {
		val, ok := lookup(name)
		if !ok || val == "" {
			missing = append(missing, name)
		}
		return val, true
	})
	if len(missing) > 0 {
		return "", &ConfigError{Reason: ReasonCreateContainerConfigError,
			Message: fmt.Sprintf("failed to prepare subPath for volumeMount %q: missing value for %s", vm.Name, strings.Join(missing, ", "))}
	}
	return sub, nil
}

// resolveSubPath is the host path of sub below root, one component at a
// time: missing components are created as directories owned as their
// parent is (the pod's root in a persistent volume), and a symlink that
// leads out of root is refused.
func resolveSubPath(root, sub string) (string, error) {
	if !filepath.IsLocal(sub) {
		return "", fmt.Errorf("subPath %q must be a relative path that does not leave the volume", sub)
	}
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	cur := root
	for _, part := range strings.Split(filepath.Clean(sub), string(filepath.Separator)) {
		next := filepath.Join(cur, part)
		if _, err := os.Lstat(next); errors.Is(err, fs.ErrNotExist) {
			if err := mkdirLikeParent(next, cur); err != nil {
				return "", err
			}
		}
		resolved, err := filepath.EvalSymlinks(next)
		if err != nil {
			return "", err
		}
		if !within(root, resolved) {
			return "", fmt.Errorf("subPath %q leads to %s, outside the volume %s", sub, resolved, root)
		}
		cur = resolved
	}
	return cur, nil
}

// mkdirLikeParent creates dir with the owner of parent.
func mkdirLikeParent(dir, parent string) error {
	uid, gid, err := ownerOf(parent)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return os.Lchown(dir, uid, gid)
}
