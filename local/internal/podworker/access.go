package podworker

import (
	"context"
	"net"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"

	"github.com/ray-operator/ray-operator/local/internal/containerlog"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// What the kubelet API asks of a pod (logs, exec, attach, port-forward). The
// answers come from the worker's goroutine, the only one that reads its
// containers' state; errors are virtual-kubelet errdefs values so that the
// API maps them to 404 and 400.

// closedChan is an already closed channel: the log of an ended attempt is
// complete.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// errWorkerGone is returned once a pod's worker has ended.
var errWorkerGone = errdefs.NotFound("the pod has stopped on this node")

// ask runs f on the worker's goroutine and returns its error.
func (w *Worker) ask(f func() error) error {
	errc := make(chan error, 1)
	if !w.post(func() { errc <- f() }) {
		return errWorkerGone
	}
	return <-errc
}

// LogFile locates the log of the current (or previous) attempt of
// container; ended is closed once that attempt has ended.
func (w *Worker) LogFile(container string, previous bool) (path string, ended <-chan struct{}, err error) {
	err = w.ask(func() error {
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
		path, ended = containerlog.Path(w.sandbox().Dir(), container, attempt), closedChan
		if c.proc != nil && !previous {
			ended = c.proc.Done()
		}
		return nil
	})
	return path, ended, err
}

// Exec runs spec in the running attempt of container with the container's
// environment and working directory, and returns its exit code.
func (w *Worker) Exec(ctx context.Context, container string, spec sandbox.ExecSpec) (int, error) {
	rc, err := w.publishedRunning(container)
	if err != nil {
		return -1, err
	}
	spec.Env, spec.WorkingDir = rc.env, rc.workingDir
	return rc.Proc.Exec(ctx, spec)
}

// Attach attaches a client to the running attempt of container (kubectl
// attach) until either ends.
func (w *Worker) Attach(ctx context.Context, container string, spec sandbox.AttachSpec) error {
	rc, err := w.publishedRunning(container)
	if err != nil {
		return err
	}
	return rc.Proc.Attach(ctx, spec)
}

// DialContext connects to address from inside the pod's network namespace
// (port-forward).
func (w *Worker) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	sb := w.sandbox()
	if sb == nil {
		return nil, errdefs.InvalidInput("the pod's sandbox does not exist yet")
	}
	return sb.DialContext(ctx, network, address)
}

// find returns the container named name.
func (w *Worker) find(name string) *ctr {
	for _, c := range w.allCtrs() {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}
