package podworker

import (
	"fmt"
	"slices"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
)

// RunningContainer is a container attempt running now: what the kubelet
// API's resource metrics and stats summary report.
type RunningContainer struct {
	// Name is the container's name in the pod.
	Name string
	// Proc is the running attempt.
	Proc Process

	// env and workingDir are those of the attempt: commands run in it
	// (exec) get them too.
	env        []string
	workingDir string
}

// RunningContainers lists the pod's running attempts (init containers
// included), in the pod's order, as the worker last published them; none
// once the worker has ended. It never waits for the worker, which may be
// busy for a while (stopping containers within their grace period), so
// that reading one pod's figures does not hold up the node's others.
func (w *Worker) RunningContainers() []RunningContainer {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.published)
}

// runningNow lists the running attempts; only the worker's goroutine calls
// it.
func (w *Worker) runningNow() []RunningContainer {
	var running []RunningContainer
	for _, c := range w.allCtrs() {
		if c.running() {
			running = append(running, RunningContainer{Name: c.spec.Name, Proc: c.proc, env: c.env, workingDir: c.workingDir})
		}
	}
	return running
}

// publishedRunning returns the running attempt of container as the worker
// last published it, without waiting for the worker: exec and attach work
// while it is busy, as during a deletion's grace period.
func (w *Worker) publishedRunning(container string) (RunningContainer, error) {
	select {
	case <-w.done:
		return RunningContainer{}, errWorkerGone
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rc := range w.published {
		if rc.Name == container {
			return rc, nil
		}
	}
	if podinputs.FindContainer(w.pod, container) == nil {
		return RunningContainer{}, errdefs.NotFoundf("container %q is not in the pod", container)
	}
	return RunningContainer{}, errdefs.InvalidInput(fmt.Sprintf("container %q is not running", container))
}
