package podinputs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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

// Mounts are a container's volumeMounts as bind mounts of v's paths. A
// subPath mounts the file or directory below the volume (missing
// directories created), opened once with no symlink or ".." that leads out
// of the volume and bind-mounted from the descriptor (see subPathSource),
// as a kubelet does; a subPath of a configMap key is therefore the file of
// the current contents, and, as on a kubelet, does not see later updates.
// configMap, secret, downwardAPI and projected volumes are always
// read-only, as a kubelet mounts them. A subPathExpr needs the container's
// environment: use ExpandedMounts.
func Mounts(c *corev1.Container, v *PodVolumes) ([]Mount, error) {
	return ExpandedMounts(c, v, nil)
}

// ExpandedMounts is Mounts with subPathExpr expanded from env (the
// container's environment as Env builds it); a reference to a variable that
// is missing or empty is an error, as on a kubelet.
func ExpandedMounts(c *corev1.Container, v *PodVolumes, env []string) ([]Mount, error) {
	lookup := envLookup(env)
	out := make([]Mount, 0, len(c.VolumeMounts))
	for i, vm := range c.VolumeMounts {
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
			if src, err = v.subPathSource(src, sub, c.Name, i); err != nil {
				return nil, subPathError(err, vm.Name, c.Name)
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

// subPathError words a subPath's failure as a kubelet does: a subPath that
// is absolute or has a "..", with the subPath; anything else (a symlink out
// of the volume, say) without details, which would tell the pod about the
// host's files. The details stay in the error's Err.
func subPathError(err error, volume, container string) *ConfigError {
	ce := &ConfigError{Reason: ReasonCreateContainerConfigError, Err: err}
	var invalid *invalidSubPath
	if errors.As(err, &invalid) {
		ce.Message = invalid.Error()
	} else {
		ce.Message = fmt.Sprintf("failed to prepare subPath for volumeMount %q of container %q", volume, container)
	}
	return ce
}

// invalidSubPath is a subPath the node refuses as written.
type invalidSubPath struct{ msg string }

func (e *invalidSubPath) Error() string { return e.msg }

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

// subPathsDir, in the pod's volume directory, holds the subPath mounts:
// subPathsDir/<container>/<index of the volumeMount>. No volume is named
// so: volume names have no dot.
const subPathsDir = ".subpaths"

// subPathSource opens sub below the volume at root, creating missing
// directories owned as their parent is (the pod's root in a persistent
// volume), and bind-mounts what it opened at the container's subPath mount
// point, which it returns. A symlink may lead anywhere in the volume, not
// out of it: the open is done by the kernel beneath the volume's root, so
// that a pod renaming parts of the path meanwhile cannot make it leave.
func (v *PodVolumes) subPathSource(root, sub, container string, index int) (string, error) {
	switch {
	case filepath.IsAbs(sub):
		return "", &invalidSubPath{fmt.Sprintf("error SubPath `%s` must not be an absolute path", sub)}
	case slices.Contains(strings.Split(sub, "/"), ".."):
		return "", &invalidSubPath{fmt.Sprintf("unable to provision SubPath `%s`: must not contain '..'", sub)}
	case v.dir == "":
		return "", errors.New("the volumes have no directory for subPath mounts")
	}
	dir, err := openDir(root)
	if err != nil {
		return "", err
	}
	defer unix.Close(dir)
	if err := mkdirsBeneath(dir, sub, inVolume, true); err != nil {
		return "", fmt.Errorf("subPath %q: %w", sub, err)
	}
	fd, err := openat2(dir, filepath.Clean(sub), unix.O_PATH, inVolume)
	if err != nil {
		return "", fmt.Errorf("subPath %q: %w", sub, &fs.PathError{Op: "open", Path: sub, Err: err})
	}
	defer unix.Close(fd)
	target := filepath.Join(v.dir, subPathsDir, container, strconv.Itoa(index))
	if err := os.MkdirAll(filepath.Dir(target), 0o711); err != nil {
		return "", err
	}
	if err := v.bind(fd, target); err != nil {
		return "", err
	}
	return target, nil
}
