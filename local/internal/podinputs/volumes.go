package podinputs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/moby/sys/mountinfo"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// PodVolumes are a pod's volumes on the host. Mounts may run while Refresh
// does; Refresh and Release must not run concurrently with themselves or
// each other.
type PodVolumes struct {
	// Paths maps a volume name to its host path.
	Paths map[string]string
	// Clock names the timestamped directories and decides when a projected
	// token is renewed (VolumesAt's clock; the real one for Volumes).
	Clock clock.PassiveClock

	apiData  map[string]bool // configMap, secret, downwardAPI and projected volumes
	readOnly map[string]bool // those and read-only persistentVolumeClaim volumes
	tmpfs    []string        // mounted Memory emptyDirs
	tokens   map[string]*authenticationv1.TokenRequest

	dir     string     // the pod's volume directory
	bindsMu sync.Mutex // Mounts adds subPath binds while the worker runs on
	binds   []string   // where mountFD mounted hostPath, claim and subPath sources
}

// Volumes writes a pod's volumes below dir, one subdirectory per volume
// (a hostPath or persistentVolumeClaim volume's is a bind mount of the
// host directory or file it names, opened once where the node's host-access
// policy allows it: see hostPathVolume and claimVolume), and returns their
// host paths.
// emptyDir with medium Memory is a tmpfs mount of MemoryVolumeSize;
// configMap, secret, downwardAPI
// and projected volumes are written atomically (see writeAtomic). A volume
// that cannot be set up, or of a kind the local node does not support, is a
// *ConfigError with reason ContainerCreating; nothing stays mounted then.
func Volumes(ctx context.Context, objs Objects, pod *corev1.Pod, dir string, facts PodFacts) (*PodVolumes, error) {
	return VolumesAt(ctx, clock.RealClock{}, objs, pod, dir, facts)
}

// VolumesAt is Volumes with the clock the node runs on; the PodVolumes keep
// it for Refresh (nil is the real clock).
func VolumesAt(ctx context.Context, clk clock.PassiveClock, objs Objects, pod *corev1.Pod, dir string, facts PodFacts) (*PodVolumes, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	v := &PodVolumes{
		Paths:    map[string]string{},
		Clock:    clk,
		apiData:  map[string]bool{},
		readOnly: map[string]bool{},
		tokens:   map[string]*authenticationv1.TokenRequest{},
		dir:      dir,
	}
	// The node's directory: no pod may rename what is in it.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b := v.contents(objs, pod, facts)
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if err := v.setUp(ctx, b, vol, filepath.Join(dir, vol.Name)); err != nil {
			ce := volumeError(vol.Name, err)
			if rerr := v.Release(); rerr != nil {
				return nil, errors.Join(ce, rerr)
			}
			return nil, ce
		}
	}
	return v, nil
}

func (v *PodVolumes) contents(objs Objects, pod *corev1.Pod, facts PodFacts) *contents {
	return &contents{
		fetch:  newFetcher(objs, pod.Namespace),
		pod:    pod,
		facts:  facts,
		tokens: &tokenSource{objs: objs, now: v.Clock.Now(), issued: v.tokens},
	}
}

func (v *PodVolumes) setUp(ctx context.Context, b *contents, vol *corev1.Volume, path string) error {
	switch src := vol.VolumeSource; {
	case src.EmptyDir != nil:
		return v.emptyDir(src.EmptyDir, vol.Name, path, MemoryVolumeSize(b.pod, src.EmptyDir, b.facts.NodeAllocatable))
	case src.HostPath != nil:
		return v.hostPathVolume(vol.Name, src.HostPath, b.facts.HostAccess, path)
	case src.PersistentVolumeClaim != nil:
		return v.claimVolume(ctx, b, src.PersistentVolumeClaim, vol.Name, path)
	}
	files, ok, err := b.files(ctx, vol)
	if !ok {
		return configErrorf("%s volumes are not supported on the local node", volumeKind(vol))
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	if _, err := writeAtomic(path, files, v.Clock.Now()); err != nil {
		return err
	}
	if err := chownTree(path, b.facts.VolumeOwner); err != nil {
		return err
	}
	v.Paths[vol.Name] = path
	v.apiData[vol.Name] = true
	v.readOnly[vol.Name] = true
	return nil
}

func (v *PodVolumes) emptyDir(src *corev1.EmptyDirVolumeSource, name, path string, memorySize int64) error {
	if src.Medium != corev1.StorageMediumDefault && src.Medium != corev1.StorageMediumMemory {
		return configErrorf("emptyDir medium %q is not supported on the local node", src.Medium)
	}
	if err := os.MkdirAll(path, 0o777); err != nil {
		return err
	}
	if src.Medium == corev1.StorageMediumMemory {
		// An adopted pod's tmpfs is still mounted, with its data, in the
		// running containers: keep it.
		mounted, err := mountinfo.Mounted(path)
		if err != nil {
			return err
		}
		if !mounted {
			if err := mountTmpfs(path, memorySize); err != nil {
				return err
			}
		}
		v.tmpfs = append(v.tmpfs, path)
	}
	// The directory is for every user of the pod, whatever the umask.
	if err := os.Chmod(path, 0o777); err != nil {
		return err
	}
	v.Paths[name] = path
	return nil
}

// Refresh re-writes the configMap, secret, downwardAPI and projected volumes
// whose contents changed, atomically, renewing projected tokens past 80 % of
// their lifetime. A volume whose objects cannot be read keeps its contents;
// the errors of all volumes are returned together.
func (v *PodVolumes) Refresh(ctx context.Context, objs Objects, pod *corev1.Pod, facts PodFacts) error {
	b := v.contents(objs, pod, facts)
	var errs []error
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if !v.apiData[vol.Name] {
			continue
		}
		files, _, err := b.files(ctx, vol)
		var changed bool
		if err == nil {
			changed, err = writeAtomic(v.Paths[vol.Name], files, v.Clock.Now())
		}
		if changed && err == nil {
			err = chownTree(v.Paths[vol.Name], facts.VolumeOwner)
		}
		if err != nil {
			errs = append(errs, volumeError(vol.Name, err))
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// Release unmounts the pod's tmpfs volumes and the binds of its hostPath,
// persistentVolumeClaim and subPath sources. It may be called again after a
// failure; what is unmounted is not unmounted twice.
func (v *PodVolumes) Release() error {
	errs := []error{v.releaseBinds()}
	kept := v.tmpfs[:0]
	for _, p := range v.tmpfs {
		if err := unmountTmpfs(p); err != nil {
			errs = append(errs, err)
			kept = append(kept, p)
		}
	}
	v.tmpfs = kept
	return errors.Join(errs...)
}

// volumeError words a volume's failure as a kubelet's FailedMount event.
func volumeError(name string, err error) *ConfigError {
	ce := &ConfigError{Reason: ReasonContainerCreating, Err: err}
	var inner *ConfigError
	if errors.As(err, &inner) && inner.Err != nil {
		ce.Err = inner.Err
	}
	ce.Message = fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", name, err)
	return ce
}

// volumeKind is the JSON name of a volume's source ("persistentVolumeClaim").
func volumeKind(vol *corev1.Volume) string {
	raw, err := json.Marshal(vol.VolumeSource)
	if err != nil {
		return "unknown"
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || len(fields) != 1 {
		return "unknown"
	}
	for k := range fields {
		return k
	}
	return "unknown"
}

// chownTree gives dir and everything below it (symlinks themselves) to
// owner; nil changes nothing.
func chownTree(dir string, owner *Owner) error {
	if owner == nil {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, owner.UID, owner.GID)
	})
}
