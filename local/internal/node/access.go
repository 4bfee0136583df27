package node

import (
	"fmt"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
)

// logRef locates the log of one container attempt.
type logRef struct {
	path string
	done <-chan struct{} // closed once the attempt ended
}

// closedChan is an already closed channel.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// errWorkerGone is returned once a pod's worker has ended.
var errWorkerGone = errdefs.NotFound("the pod has stopped on this node")

// ask runs f on the worker's goroutine and returns its error.
func (w *podWorker) ask(f func() error) error {
	errc := make(chan error, 1)
	if !w.post(func() { errc <- f() }) {
		return errWorkerGone
	}
	return <-errc
}

// logRef finds the log of the current (or previous) attempt of container.
func (w *podWorker) logRef(container string, previous bool) (logRef, error) {
	var ref logRef
	err := w.ask(func() error {
		c := w.find(container)
		if c == nil {
			return errdefs.NotFoundf("container %q is not in the pod", container)
		}
		attempt := c.attempts - 1
		if previous {
			attempt--
		}
		if attempt < 0 || w.sandbox() == nil {
			return errdefs.InvalidInputf("container %q has no %s log", container, map[bool]string{true: "previous", false: "current"}[previous])
		}
		ref = logRef{path: logPath(w.sandbox().Dir(), container, attempt), done: closedChan}
		if c.proc != nil && !previous {
			ref.done = c.proc.Done()
		}
		return nil
	})
	return ref, err
}

// runningProcess returns the running attempt of container and its env.
func (w *podWorker) runningProcess(container string) (process, []string, error) {
	var p process
	var env []string
	err := w.ask(func() error {
		c := w.find(container)
		if c == nil {
			return errdefs.NotFoundf("container %q is not in the pod", container)
		}
		if c.proc == nil {
			return errdefs.InvalidInput(fmt.Sprintf("container %q is not running", container))
		}
		p, env = c.proc, c.env
		return nil
	})
	return p, env, err
}

// find returns the container named name.
func (w *podWorker) find(name string) *ctr {
	for _, c := range w.allCtrs() {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}
