package podworker

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ray-operator/ray-operator/local/internal/containerlog"
)

// reasonEvicted is the pod's reason, and its event's, when the node evicts
// it; the messages are those of a kubelet's eviction manager (the trailing
// space included).
const (
	reasonEvicted           = "Evicted"
	messageEmptyDirFmt      = "Usage of EmptyDir volume %q exceeds the limit %q. "
	messagePodStorageFmt    = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	messageContainerStorage = "Container %s exceeded its local ephemeral storage limit %q. "
)

// storageLimit is one limit on a pod's local storage: the directories whose
// usage counts, and the eviction message when it is exceeded.
type storageLimit struct {
	dirs    []string
	limit   int64
	message string
}

// CheckStorage measures the pod's local storage against its limits, in the
// order a kubelet checks them (emptyDir sizeLimits, the pod's
// ephemeral-storage limit, each container's), and evicts the pod when one
// is exceeded. The measuring runs in the caller's goroutine, not the
// worker's; the node calls it every Limits.StorageCheckInterval.
func (w *Worker) CheckStorage() {
	var limits []storageLimit
	if err := w.ask(func() error {
		limits = w.storageLimits()
		return nil
	}); err != nil {
		return
	}
	for _, l := range limits {
		used, err := diskUsage(l.dirs)
		if err != nil {
			w.log.Info("Measuring the pod's local storage failed", "err", err)
			continue
		}
		if used > l.limit {
			_ = w.ask(func() error {
				w.evict(l.message)
				return nil
			})
			return
		}
	}
}

// storageLimits lists the pod's storage limits while it runs: none before
// its sandbox exists or once it is terminal.
func (w *Worker) storageLimits() []storageLimit {
	sb := w.sandbox()
	if sb == nil || w.vols == nil || w.state.terminalPhase != "" {
		return nil
	}
	pod := w.Pod()
	var out, perContainer []storageLimit
	var emptyDirs []string
	for _, v := range pod.Spec.Volumes {
		ed := v.EmptyDir
		if ed == nil || ed.Medium == corev1.StorageMediumMemory {
			continue
		}
		dir := filepath.Join(sb.Dir(), "volumes", v.Name)
		emptyDirs = append(emptyDirs, dir)
		if ed.SizeLimit != nil && ed.SizeLimit.Sign() > 0 {
			out = append(out, storageLimit{dirs: []string{dir}, limit: ed.SizeLimit.Value(), message: fmt.Sprintf(messageEmptyDirFmt, v.Name, ed.SizeLimit.String())})
		}
	}
	all := emptyDirs
	for _, c := range w.allCtrs() {
		dirs := []string{filepath.Dir(containerlog.Path(sb.Dir(), c.spec.Name, 0))}
		if c.proc != nil {
			dirs = append(dirs, c.proc.WritableDir())
		}
		all = append(all, dirs...)
		if lim, ok := c.spec.Resources.Limits[corev1.ResourceEphemeralStorage]; ok {
			perContainer = append(perContainer, storageLimit{dirs: dirs, limit: lim.Value(), message: fmt.Sprintf(messageContainerStorage, c.spec.Name, lim.String())})
		}
	}
	if total, ok := podStorageLimit(pod); ok {
		out = append(out, storageLimit{dirs: all, limit: total.Value(), message: fmt.Sprintf(messagePodStorageFmt, total.String())})
	}
	return append(out, perContainer...)
}

// podStorageLimit is the pod's ephemeral-storage limit as a kubelet sums
// it: the limits its containers and sidecars declare, or the largest init
// container's if more; not ok when none declares one.
func podStorageLimit(pod *corev1.Pod) (resource.Quantity, bool) {
	var sum, initMax resource.Quantity
	found := false
	add := func(c corev1.Container, into *resource.Quantity, keepMax bool) {
		lim, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]
		if !ok {
			return
		}
		found = true
		if !keepMax {
			into.Add(lim)
		} else if lim.Cmp(*into) > 0 {
			*into = lim.DeepCopy()
		}
	}
	for _, c := range pod.Spec.Containers {
		add(c, &sum, false)
	}
	for _, c := range pod.Spec.InitContainers {
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if sidecar {
			add(c, &sum, false)
		} else {
			add(c, &initMax, true)
		}
	}
	if initMax.Cmp(sum) > 0 {
		sum = initMax
	}
	return sum, found
}

// evict fails the pod as a kubelet's eviction manager does for local
// storage: phase Failed, reason Evicted with message, a Warning event, and
// every container killed at once (grace period 0), none restarted.
func (w *Worker) evict(message string) {
	if w.state.terminalPhase != "" {
		return
	}
	w.state.terminalPhase = corev1.PodFailed
	w.state.reason, w.state.message = reasonEvicted, message
	w.deps.Recorder.Event(w.Pod(), corev1.EventTypeWarning, reasonEvicted, message)
	w.log.Info("Evicting the pod", "message", message)
	zero := int64(0)
	for _, c := range w.allCtrs() {
		w.killWithGrace(c, "Stopping container "+c.spec.Name, &zero)
	}
}

// diskUsage is the disk space the files below dirs take (their blocks, as
// du counts them, a hard-linked file once); a missing directory takes none.
func diskUsage(dirs []string) (int64, error) {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var total int64
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed meanwhile
				}
				return err
			}
			info, err := d.Info()
			if err != nil {
				return ignoreGone(err)
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if !ok {
				return nil
			}
			id := inode{dev: st.Dev, ino: st.Ino}
			if !seen[id] {
				seen[id] = true
				total += st.Blocks * 512
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}

func ignoreGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
