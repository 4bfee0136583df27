package podworker

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/containerlog"
)

// DefaultPodPidsLimit is the pids limit of every pod when Limits.PodPids is
// zero. A kubelet has none unless podPidsLimit is configured; the local
// node runs on a developer's machine, whose kernel.pid_max may be 32768,
// so that a pod that forks without end would starve every other process.
// An idle Ray head (2 CPUs: GCS, raylet, dashboard and its modules, agents,
// workers) runs about 400 threads, each of which counts: 4096 leaves it
// room ten times over.
const DefaultPodPidsLimit = 4096

// DefaultStorageCheckInterval is how often a pod's local storage is
// measured when Limits.StorageCheckInterval is zero: the kubelet's
// eviction manager's monitoring period.
const DefaultStorageCheckInterval = 10 * time.Second

// Limits are what the node bounds every pod by, besides what the pod's
// spec asks for.
type Limits struct {
	// PodPids is pids.max of each pod's cgroup (the kubelet's
	// podPidsLimit): its processes and threads together. Zero means
	// DefaultPodPidsLimit; negative means none.
	PodPids int64
	// LogRotation bounds each container's log; zero fields mean the
	// containerlog defaults (the kubelet's containerLogMaxSize 10Mi and
	// containerLogMaxFiles 5).
	LogRotation containerlog.Rotation
	// LogCheckInterval is how often the running containers' logs are
	// checked for rotation (the kubelet's containerLogMonitorInterval);
	// zero means containerlog.DefaultMonitorInterval.
	LogCheckInterval time.Duration
	// StorageCheckInterval is how often pods with emptyDir sizeLimits or
	// ephemeral-storage limits have their usage measured; zero means
	// DefaultStorageCheckInterval.
	StorageCheckInterval time.Duration
}

// WithDefaults returns l with its zero fields set to their defaults.
func (l Limits) WithDefaults() Limits {
	if l.PodPids == 0 {
		l.PodPids = DefaultPodPidsLimit
	}
	if l.LogRotation.MaxSize == 0 {
		l.LogRotation.MaxSize = containerlog.DefaultMaxSize
	}
	if l.LogRotation.MaxFiles == 0 {
		l.LogRotation.MaxFiles = containerlog.DefaultMaxFiles
	}
	if l.LogCheckInterval <= 0 {
		l.LogCheckInterval = containerlog.DefaultMonitorInterval
	}
	if l.StorageCheckInterval <= 0 {
		l.StorageCheckInterval = DefaultStorageCheckInterval
	}
	return l
}

// Validate refuses limits that cannot bound what they are for.
func (l Limits) Validate() error {
	return l.WithDefaults().LogRotation.Validate()
}

// tmpSize is the size of a container's /tmp tmpfs: its memory limit, else
// the node's allocatable memory (what all pods may take together).
func tmpSize(c *corev1.Container, nodeAllocatable corev1.ResourceList) int64 {
	if mem, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && !mem.IsZero() {
		return mem.Value()
	}
	if mem, ok := nodeAllocatable[corev1.ResourceMemory]; ok {
		return mem.Value()
	}
	return 0
}

// RotateLogs rotates the logs of the pod's running containers that reached
// the node's maximum size (see containerlog.Rotation) and returns once it
// is done; the node calls it every Limits.LogCheckInterval.
func (w *Worker) RotateLogs() {
	_ = w.ask(func() error {
		w.rotateLogs()
		return nil
	})
}

func (w *Worker) rotateLogs() {
	rotation, now := w.deps.Limits.WithDefaults().LogRotation, w.deps.Clock.Now()
	for _, c := range w.allCtrs() {
		if c.proc == nil || c.logPath == "" {
			continue
		}
		p, path := c.proc, c.logPath
		if _, err := rotation.Rotate(path, now, func() error { return p.ReopenLog(path) }); err != nil {
			w.log.Info("Rotating the container's log failed", "container", c.spec.Name, "err", err)
		}
	}
}
